// The grant flags of `sbx run`, `sbx resume` and `sbx pool claim` (jcp §4.2–§4.7): --grant CHAIN|SET
// and its companions read into GrantTerms (files read, principals resolved, usage checked), which
// the host's openGrantRun opens (commands/sbx/grant.ts).
import type { Envelope, KeyPair } from "@sbx/wire";
import { readPrincipal } from "@sbx/host/keys";
import type { SandboxOptions } from "@sbx/host/sandbox";
import { UsageError } from "../command.ts";
import { readChain, readJson, readList } from "../commands/jcp/lib/files.ts";
import { openGrantRun, type GrantRun, type GrantTerms } from "@sbx/host/grants";
import type { RunGate } from "../commands/sbx/run-gate.ts";

/** The options `sbx run` takes for a run under grants. */
export const GRANT_OPTIONS = {
  grant: { type: "string" },
  trust: { type: "string", multiple: true },
  ledger: { type: "string" },
  "ledger-host": { type: "string", multiple: true },
  revocations: { type: "string" },
  amendments: { type: "string" },
} as const;

export const GRANT_HELP = `  --grant CHAIN|SET  run under a JCP grant chain file (root first, jcp §4.4), or a grant set file
                   (a JSON list of chains: grants_id binds every leaf, each leaf governs its own
                   resources, the energy is debited on the chains in order, each up to what is
                   left along it; see sandbox-attest §5.6 item 7): verified now against
                   --trust, grants_id is its leaf's grant set; the leaf's /fs/… resources are the
                   only host paths bound in (read-only; /fs/work/** is the workspace and is
                   required, writable with write; another folder with write is refused,
                   DiskLimitUnavailable: it would have no disk bound); /net/127.0.0.1/PORT with connect reaches that host
                   port and nothing else (no network otherwise); /exec/blake3:<hex> with exec
                   names every program the unit may run (an allowlist gate, with --exec-policy
                   composed; /exec/** any; no /exec/ resource: no restriction by the grant);
                   the smallest remaining budget
                   along the chain is enforced live (BudgetExhausted), the energy debited on --ledger
  --trust DID|FILE trusted root issuer of --grant (repeatable)
  --ledger DIR     the grant's spend ledger (jcp spend's append-only folder); needs --key
  --ledger-host DID a further metering host whose receipts the ledger holds (repeatable)
  --revocations F  a revocation list (jcp revoke --list)
  --amendments LOG the leaf's checkpoint log (jcp amend --log): read again at every metering
                   period, so an issuer's amendment takes effect while the unit runs (jcp §4.7)`;

/**
 * readGrantArg reads --grant FILE: a chain file (a JSON list of grant envelopes, root first), or a
 * grant set file (a JSON list of such chains, each a list): the chains the run is under, in order.
 */
function readGrantArg(path: string): Envelope[][] {
  const v = readJson(path, "grant chain or set file");
  if (Array.isArray(v) && v.length > 0 && v.every((c) => Array.isArray(c))) {
    if (v.length > 256) throw new UsageError(`${path}: a grant set holds at most 256 chains`);
    return (v as unknown[][]).map((c, i) => {
      if (c.length === 0) throw new UsageError(`${path}: chain ${i + 1} is empty`);
      return c as Envelope[];
    });
  }
  return [readChain(path)];
}

type Values = Record<string, unknown>;

/**
 * grantTermsOf reads --grant and its companions into GrantTerms; null without --grant. Usage errors
 * for a grant without --trust, --ledger, --key or a sandbox, and for --amendments beside a set.
 */
export function grantTermsOf(
  v: Values,
  hostKey: KeyPair,
  keyGiven: boolean,
  sandboxed: boolean,
): GrantTerms | null {
  const path = typeof v.grant === "string" ? v.grant : undefined;
  if (path === undefined) return null;
  const roots = ((v.trust as string[] | undefined) ?? []).map((t) => readPrincipal(t, "--trust"));
  if (roots.length === 0) throw new UsageError("--grant needs --trust (the trusted root issuers)");
  if (typeof v.ledger !== "string") throw new UsageError("--grant needs --ledger DIR (the spend ledger)");
  if (!keyGiven) throw new UsageError("--grant needs --key (the metering host that signs the debits)");
  if (!sandboxed) throw new UsageError("--grant runs in a sandbox: it cannot take --unsandboxed");
  const chains = readGrantArg(path);
  const amendments = typeof v.amendments === "string" ? v.amendments : undefined;
  if (amendments !== undefined && chains.length > 1)
    throw new UsageError("--amendments is the log of one chain's leaf: it takes a chain file, not a set");
  const list = typeof v.revocations === "string" ? v.revocations : undefined;
  const hosts = [
    hostKey.did,
    ...((v["ledger-host"] as string[] | undefined) ?? []).map((h) => readPrincipal(h, "--ledger-host")),
  ];
  return {
    chains,
    roots,
    hosts,
    ledger: v.ledger,
    // Read again at every check: a revocation after the run started counts.
    ...(list !== undefined ? { revocations: () => readList(list) } : {}),
    ...(amendments !== undefined ? { amendments } : {}),
  };
}

/**
 * prepareGrantRun reads the grant flags (grantTermsOf) and opens the run under them (openGrantRun);
 * null without --grant.
 */
export function prepareGrantRun(
  v: Values,
  hostKey: KeyPair,
  keyGiven: boolean,
  sandbox: SandboxOptions | null,
): GrantRun | null {
  const terms = grantTermsOf(v, hostKey, keyGiven, sandbox !== null);
  return terms === null || sandbox === null ? null : openGrantRun(terms, hostKey, sandbox);
}

/**
 * checkPolicyFlag: a usage error when --policy names another exec policy than the one the grant's
 * /exec/ resources make the run's gate (GrantRun.gateWith, composed with `given`, the run's own).
 */
export function checkPolicyFlag(
  grant: GrantRun,
  given: RunGate | null,
  policyFlag: string | undefined,
): void {
  if (policyFlag === undefined) return;
  const gate = grant.gateWith(given);
  if (gate !== null && gate !== given && policyFlag !== gate.policy)
    throw new UsageError(`--policy ${policyFlag} is not the exec policy the grant gives (${gate.policy})`);
}
