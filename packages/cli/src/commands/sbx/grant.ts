// `sbx run --grant CHAIN` (jcp §4.2–§4.4 governing a run, sandbox-attest §4.3, §5): the chain is
// verified at start against the trusted roots, its leaf names the run's grant set (grants_id), the
// leaf's scope becomes the sandbox's only host paths (../../../../host/src/grants/scopes.ts), the
// smallest remaining budget along the chain is enforced while the unit runs (a live check of the
// meter, host/src/grants/live.ts), and the interval's energy is debited on the grant's spend ledger
// as a receipt signed by the host key, citing the interval's energy receipt and attestation.
import {
  grantsId,
  JcpError,
  verifyChain,
  type EffectiveGrant,
  type SpendRequest,
} from "@sbx/jcp-grant/grant";
import {
  budgetWatch,
  loopbackPorts,
  mapScope,
  requireWorkspace,
  startForwarders,
  type BudgetWatch,
  type Forwarders,
} from "@sbx/host/grants";
import { HostError } from "@sbx/host";
import type { RunUnitResult } from "@sbx/host/run";
import type { SandboxOptions } from "@sbx/host/sandbox";
import type { Digest, Envelope, KeyPair } from "@sbx/wire";
import { UsageError } from "../../command.ts";
import { readPrincipal } from "../../keyfile.ts";
import { readChain, readList } from "../jcp/lib/files.ts";
import { amendedLeaf } from "./grantamend.ts";
import { spendOn, verifiedLedger } from "../jcp/lib/spender.ts";

/** The options `sbx run` takes for a run under grants. */
export const GRANT_OPTIONS = {
  grant: { type: "string" },
  trust: { type: "string", multiple: true },
  ledger: { type: "string" },
  "ledger-host": { type: "string", multiple: true },
  revocations: { type: "string" },
  amendments: { type: "string" },
} as const;

export const GRANT_HELP = `  --grant CHAIN    run under a JCP grant chain file (root first, jcp §4.4): verified now against
                   --trust, grants_id is its leaf's grant set; the leaf's /fs/… resources are the
                   only host paths bound in (read-only, writable with write; /fs/work/** is the
                   workspace and is required); /net/127.0.0.1/PORT with connect reaches that host
                   port and nothing else (no network otherwise); the smallest remaining budget
                   along the chain is enforced live (BudgetExhausted), the energy debited on --ledger
  --trust DID|FILE trusted root issuer of --grant (repeatable)
  --ledger DIR     the grant's spend ledger (jcp spend's append-only folder); needs --key
  --ledger-host DID a further metering host whose receipts the ledger holds (repeatable)
  --revocations F  a revocation list (jcp revoke --list)
  --amendments LOG the leaf's checkpoint log (jcp amend --log): read again at every metering
                   period, so an issuer's amendment takes effect while the unit runs (jcp §4.7)`;

/** What a run under a grant chain was given and saw. */
export interface GrantRun {
  readonly grantsId: Digest;
  readonly chain: readonly EffectiveGrant[];
  readonly watch: BudgetWatch;
  /** The remaining budget (µJ) along the chain when the run started. */
  readonly startRemaining: bigint;
  /** The host loopback ports the grant lets the unit connect to. */
  readonly ports: readonly number[];
  /** Starts the port relays, if any; returns the sandbox options with the grant's binds. */
  open(): Promise<SandboxOptions>;
  /** Stops the port relays. */
  close(): Promise<void>;
  /** Debits the interval on the ledger; returns the spend's summary. */
  debit(r: RunUnitResult): GrantDebit;
  /** The ledger as a durable run's debits use it (lifecycle/granted.ts). */
  readonly ledger: GrantLedger;
}

/** A grant's ledger and chain, for a durable run that debits several intervals and idle energy. */
export interface GrantLedger {
  readonly path: string;
  /** The chain's envelopes, root first. */
  readonly envs: readonly Envelope[];
  /** Records one spend (spendOn's refusals); returns its receipt and what is left along the chain. */
  spend(req: SpendRequest): { receipt: Envelope; remaining_uj: bigint };
  /** The receipts on the ledger now, verified. */
  receipts(): readonly Envelope[];
  /** The chain verified now with the leaf in force (jcp §4.4, §4.5, §4.7): Revoked, Expired, …. */
  verifyNow(): void;
  /** The smallest remaining budget along the chain in force (µJ). */
  remaining(): bigint;
}

/** What the debit recorded. */
export interface GrantDebit {
  readonly ledger: string;
  readonly spent_uj: string;
  readonly receipt: Envelope;
  readonly remaining_uj: string;
  readonly retries: number;
  /** The live check's metering period, and the most one period added (the overshoot bound). */
  readonly period_ms: number;
  readonly max_period_uj: string;
}

type Values = Record<string, unknown>;

function minRemaining(chain: readonly EffectiveGrant[], used: (a: Digest) => bigint): bigint {
  return chain.reduce(
    (m, g) => {
      const left = g.budget.uj - used(g.address);
      return left < m ? left : m;
    },
    chain[0]!.budget.uj - used(chain[0]!.address),
  );
}

/**
 * prepareGrantRun reads --grant and its companions; null without --grant. Usage errors for a grant
 * without --trust, --ledger, --key or a sandbox; verifyChain's codes for a chain that does not
 * verify now; `GrantsInsufficient` when the leaf does not give the workspace; `BudgetExhausted`
 * (HostError) when nothing is left to spend.
 */
export function prepareGrantRun(
  v: Values,
  hostKey: KeyPair,
  keyGiven: boolean,
  sandbox: SandboxOptions | null,
): GrantRun | null {
  const path = typeof v.grant === "string" ? v.grant : undefined;
  if (path === undefined) return null;
  const roots = ((v.trust as string[] | undefined) ?? []).map((t) => readPrincipal(t, "--trust"));
  if (roots.length === 0) throw new UsageError("--grant needs --trust (the trusted root issuers)");
  if (typeof v.ledger !== "string") throw new UsageError("--grant needs --ledger DIR (the spend ledger)");
  if (!keyGiven) throw new UsageError("--grant needs --key (the metering host that signs the debits)");
  if (sandbox === null) throw new UsageError("--grant runs in a sandbox: it cannot take --unsandboxed");
  const ledgerPath = v.ledger;
  const envs = readChain(path);
  const revocations = readList(typeof v.revocations === "string" ? v.revocations : undefined);
  const hosts = [
    hostKey.did,
    ...((v["ledger-host"] as string[] | undefined) ?? []).map((h) => readPrincipal(h, "--ledger-host")),
  ];
  const opts = { roots, hosts, ...(revocations ? { revocations } : {}) };
  const { grants } = verifyChain(envs, { roots, at_ms: Date.now(), ...(revocations ? { revocations } : {}) });
  const leaf = grants[grants.length - 1]!;
  const folder = sandbox.workspaceFolder ?? "/work";
  const map = mapScope(leaf.scope, folder);
  const mode = requireWorkspace(map, folder);
  const amendments = typeof v.amendments === "string" ? v.amendments : undefined;
  // The chain in force now: the leaf as its issuer's amendments leave it (jcp §4.7), re-read each time.
  const inForce = (): readonly EffectiveGrant[] =>
    amendments === undefined ? grants : [...grants.slice(0, -1), amendedLeaf(envs, amendments)];
  const remainingNow = (): bigint => {
    const { ledger } = verifiedLedger(ledgerPath, opts);
    return minRemaining(inForce(), (a) => ledger.used(a).uj);
  };
  const startRemaining = remainingNow();
  if (startRemaining <= 0n)
    throw new HostError("BudgetExhausted", `nothing is left of the grants' budget on ${ledgerPath}`);
  // Fail closed: a ledger that cannot be read while the unit runs leaves it no budget.
  const watch = budgetWatch(() => {
    try {
      return remainingNow();
    } catch {
      return 0n;
    }
  });
  const ports = loopbackPorts(leaf.scope);
  let fwd: Forwarders | null = null;
  const base: SandboxOptions = { ...sandbox, binds: map.binds, workspaceReadOnly: mode === "ro" };
  const ledger: GrantLedger = {
    path: ledgerPath,
    envs,
    spend(req) {
      const { state, receipt } = spendOn(ledgerPath, envs, hostKey, req, opts, () => Date.now());
      return { receipt, remaining_uj: minRemaining(inForce(), (a) => state.ledger.used(a).uj) };
    },
    receipts: () => verifiedLedger(ledgerPath, opts).ledger.receipts,
    verifyNow() {
      // The revocation list is read again: a revocation after the run started counts.
      const now = readList(typeof v.revocations === "string" ? v.revocations : undefined);
      verifyChain(envs, { roots, at_ms: Date.now(), ...(now ? { revocations: now } : {}) });
      const leaf = inForce()[inForce().length - 1]!;
      if (Date.now() >= leaf.exp_ms)
        throw new JcpError("Expired", `the grant in force expired at ${String(leaf.exp_ms)}`);
    },
    remaining: remainingNow,
  };
  return {
    ledger,
    grantsId: grantsId([leaf.address]),
    chain: grants,
    watch,
    startRemaining,
    ports,
    async open() {
      if (ports.length === 0) return base;
      fwd = await startForwarders(ports);
      return { ...base, binds: [...map.binds, fwd.bind], wrap: fwd.wrap };
    },
    async close() {
      await fwd?.stop();
    },
    debit(r) {
      const uj = r.receipt.receipt.total_uj;
      const req = {
        uj,
        wall_ms: r.interval.end_ms - r.interval.start_ms,
        cites: { attestation: r.address, energy: r.receiptAddress },
      };
      const { state, receipt, retries } = spendOn(ledgerPath, envs, hostKey, req, opts, () => Date.now());
      const left = minRemaining(inForce(), (a) => state.ledger.used(a).uj);
      return {
        ledger: ledgerPath,
        spent_uj: uj,
        receipt,
        remaining_uj: left.toString(),
        retries,
        period_ms: watch.periodMs,
        max_period_uj: watch.maxPeriodUj().toString(),
      };
    },
  };
}
