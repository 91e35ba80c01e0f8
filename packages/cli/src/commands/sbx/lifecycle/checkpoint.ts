// jcp §4.7 at a suspend: the agent's checkpoint of a durable run under a grant chain. After the run is
// parked (its suspended segment appended), `sbx suspend --checkpoint-key FILE --checkpoints DIR
// --ledger DIR --trust …` appends the holder's signed checkpoint to the leaf's checkpoint log:
// `state` is the run record's head (which names the snapshot and manifest of the suspended segment),
// `spent` is what the grant's spend ledger records against the leaf now (the grant as a whole, not
// this run alone: a ledger may serve several runs). Refused, after the run is parked and before
// anything is appended to the log: `PhaseViolation` when the run's last segment is not suspended,
// `BadRecord` when the run names no grant chain or a grant set, `ObjectMissing` when the store lacks
// the chain; CheckpointLog.checkpoint's refusals (`NotHolder`, …) and the ledger's (`LogBroken`, …).
import { parseCanonical, type Digest, type Envelope } from "@sbx/wire";
import { verifyChain } from "@sbx/jcp-grant/grant";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { parseUnit } from "@sbx/sandbox-attest/unit";
import { readRun } from "@sbx/sandbox-attest/store";
import { GRANT_CHAIN_LABEL } from "@sbx/host/durable";
import { UsageError } from "../../../command.ts";
import { readKey, readPrincipal } from "@sbx/host/keys";
import type { RunStore } from "@sbx/host/stores";
import { appendCheckpoint } from "@sbx/host/ledger";
import { verifiedLedger } from "@sbx/host/ledger";

/** The options of `sbx suspend` that ask for the checkpoint. */
export const CHECKPOINT_OPTIONS = {
  "checkpoint-key": { type: "string" },
  checkpoints: { type: "string" },
  ledger: { type: "string" },
  trust: { type: "string", multiple: true },
  "ledger-host": { type: "string", multiple: true },
} as const;

export const CHECKPOINT_HELP = `  --checkpoint-key FILE  the grant holder's key: after the run is parked, append the holder's
                   checkpoint (jcp §4.7) to the leaf's checkpoint log --checkpoints DIR: state = the
                   record's head, spent = what --ledger DIR records against the leaf (verified
                   against --trust and the metering hosts --ledger-host, besides this host's key)`;

/** What the checkpoint appended. */
export interface SuspendCheckpoint {
  readonly state: Digest;
  readonly spent_uj: string;
  readonly length: number;
  readonly head: Digest;
}

type Values = Readonly<Record<string, unknown>>;

/** A checkpoint asked for, its flags read and checked before the run is parked. */
export interface CheckpointRequest {
  readonly key: ReturnType<typeof readKey>;
  readonly checkpoints: string;
  readonly ledger: string;
  readonly roots: string[];
  readonly hosts: string[];
}

/** checkpointRequest reads the checkpoint flags (usage errors first); null without --checkpoint-key. */
export function checkpointRequest(v: Values, hostDid: () => string | null): CheckpointRequest | null {
  if (typeof v["checkpoint-key"] !== "string") {
    if (v.checkpoints !== undefined || v.ledger !== undefined)
      throw new UsageError("--checkpoints and --ledger go with --checkpoint-key");
    return null;
  }
  if (typeof v.checkpoints !== "string") throw new UsageError("--checkpoint-key needs --checkpoints DIR");
  if (typeof v.ledger !== "string")
    throw new UsageError("--checkpoint-key needs --ledger DIR (the spend ledger)");
  const roots = ((v.trust as string[] | undefined) ?? []).map((t) => readPrincipal(t, "--trust"));
  if (roots.length === 0) throw new UsageError("--checkpoint-key needs --trust (the trusted root issuers)");
  const host = hostDid();
  const hosts = [
    ...(host !== null ? [host] : []),
    ...((v["ledger-host"] as string[] | undefined) ?? []).map((h) => readPrincipal(h, "--ledger-host")),
  ];
  return { key: readKey(v["checkpoint-key"]), checkpoints: v.checkpoints, ledger: v.ledger, roots, hosts };
}

/** checkpointAtSuspend: see the file comment. */
export async function checkpointAtSuspend(
  store: RunStore,
  id: Digest,
  q: CheckpointRequest,
): Promise<SuspendCheckpoint> {
  const { roots, hosts, key } = q;
  const rec = await readRun(store, id);
  const last = rec.segments[rec.segments.length - 1];
  if (last?.kind !== "suspended")
    throw new SandboxAttestError(
      "PhaseViolation",
      "the run is not parked: its checkpoint is taken at a suspend",
    );
  const unitBytes = await store.getObject(rec.unitId);
  if (unitBytes === null) throw new SandboxAttestError("ObjectMissing", `unit ${rec.unitId}`);
  const named = parseUnit(parseCanonical(unitBytes)).labels?.[GRANT_CHAIN_LABEL] as Digest | undefined;
  if (named === undefined)
    throw new SandboxAttestError("BadRecord", "the run was not started under a grant chain");
  const chainBytes = await store.getObject(named);
  if (chainBytes === null)
    throw new SandboxAttestError("ObjectMissing", `the run's grant chain ${named} is not in the store`);
  const chain = JSON.parse(Buffer.from(chainBytes).toString("utf8")) as Envelope[];
  if (!Array.isArray(chain) || chain.some((e) => Array.isArray(e)))
    throw new SandboxAttestError("BadRecord", "the run's grants are not one chain");
  const grants = verifyChain(chain, { roots, at_ms: Date.now() }).grants;
  const leaf = grants[grants.length - 1]!;
  const spent = verifiedLedger(q.ledger, { roots, hosts }).ledger.used(leaf.address);
  const state = rec.head;
  const { log } = appendCheckpoint(q.checkpoints, chain, (l) =>
    l.checkpoint(key, { state, spent, at_ms: Date.now() }),
  );
  return { state, spent_uj: spent.uj.toString(), length: log.length, head: log.head };
}
