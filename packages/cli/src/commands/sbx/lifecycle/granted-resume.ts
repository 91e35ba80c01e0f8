// `sbx resume` of a durable run under grants (jcp §4.5, §4.7; granted.ts): the chain is read back
// from the store by the address the unit names (or from --grant CHAIN, which must be the same grant
// set), verified now against --trust with --revocations and the leaf's --amendments, and the resume
// is refused before anything is appended when the grant in force no longer allows it: revoked
// (`Revoked`), expired (`Expired`), no budget left, an amendment below what is spent included
// (`BudgetExhausted`), another grant set (`BadRecord`), the chain not held (`ObjectMissing`). Debits
// a crash left owed are made first (reconcile); the resumed sandbox gets the grant's binds.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Digest, KeyPair } from "@sbx/wire";
import { SandboxAttestError, type RunRecord } from "@sbx/sandbox-attest/runrecord";
import type { UnitDescriptor } from "@sbx/sandbox-attest/unit";
import { GRANT_CHAIN_LABEL } from "@sbx/host/durable";
import type { RunStore } from "@sbx/host/stores";
import type { SandboxOptions } from "@sbx/host/sandbox";
import { UsageError } from "../../../command.ts";
import { prepareGrantRun } from "../../../flags/grant.ts";
import { governanceOf, mayResume, reconcile } from "@sbx/host/durable";
import type { Governance } from "@sbx/host/durable";

/** What a restoring resume under grants runs with. */
export interface ResumeGrant {
  readonly governance: Governance;
  readonly sandbox: SandboxOptions;
  close(): Promise<void>;
}

/** What grantOfRun reads from the resume. */
export interface GrantResumeInput {
  readonly store: RunStore;
  readonly id: Digest;
  readonly hostKey: KeyPair;
  readonly sandbox: Omit<SandboxOptions, "workspace">;
  readonly grantValues?: Readonly<Record<string, unknown>>;
}

async function chainFile(store: RunStore, named: Digest, dir: string): Promise<string> {
  const bytes = await store.getObject(named);
  if (bytes === null)
    throw new SandboxAttestError("ObjectMissing", `the run's grant chain ${named} is not in the store`);
  const path = join(dir, "chain.json");
  writeFileSync(path, bytes);
  return path;
}

/** grantOfRun: see the file comment; null for a run the unit names no grant chain for. */
export async function grantOfRun(
  r: GrantResumeInput,
  unit: UnitDescriptor,
  rec: RunRecord,
  ws: string,
  say: (l: string) => void,
): Promise<ResumeGrant | null> {
  const v = r.grantValues ?? {};
  const named = unit.labels?.[GRANT_CHAIN_LABEL] as Digest | undefined;
  if (named === undefined) {
    if (v.grant !== undefined || v.ledger !== undefined)
      throw new UsageError("this run was not started under a grant chain: drop --grant and --ledger");
    return null;
  }
  if (v.trust === undefined || typeof v.ledger !== "string")
    throw new UsageError(`the run is under grant chain ${named}: sbx resume needs --trust and --ledger`);
  const dir = mkdtempSync(join(tmpdir(), "sbx-chain-"));
  let grant;
  try {
    const path = typeof v.grant === "string" ? v.grant : await chainFile(r.store, named, dir);
    grant = prepareGrantRun({ ...v, grant: path }, r.hostKey, true, { ...r.sandbox, workspace: ws });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (grant === null || grant.grantsId !== rec.grantsId)
    throw new SandboxAttestError("BadRecord", `the chain given is not the run's grant set ${rec.grantsId}`);
  mayResume(grant.ledger);
  const owed = await reconcile(r.store, r.id, grant.ledger);
  if (owed.debited > 0) say(`debited ${String(owed.debited)} segment(s) a crash left owed`);
  for (const x of owed.refused) say(`debit refused: ${x}`);
  const sandbox = await grant.open();
  const g = grant;
  return { governance: governanceOf(r.store, r.id, g, say), sandbox, close: () => g.close() };
}
