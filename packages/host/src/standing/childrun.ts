// The run of one minted child (jcp §4.6 driving sandbox-attest §5.6): what `sbx run --grant CHILD
// --trust … --ledger … -- CMD` does, in process. The child's chain is verified against the trusted
// roots, its /fs/… and /net/127.0.0.1/PORT resources are the only things the sandbox reaches
// (/fs/work/** is needed), its budget and every budget above it are enforced live, and the
// interval's energy is debited on the spend ledger (../grants/grantrun.ts, ../run/granted.ts).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { addressOf, type KeyPair } from "@sbx/wire";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { openGrantRun } from "../grants/index.ts";
import { runGranted } from "../run/granted.ts";
import { runSummary, writeRunFiles } from "../run/summary.ts";
import type { RunUnitOptions } from "../run/run.ts";
import type { SandboxOptions } from "../sandbox/index.ts";
import type { ChildRun, ChildRunOutcome } from "./driver.ts";

/** The address standing for "none given" (no manifest, no exec policy): that of {}. */
const NONE = addressOf({});

/** How every minted child's command is run. */
export interface ChildRunOptions {
  /** The metering host's key: signs receipts, attestations and debits. */
  readonly hostKey: KeyPair;
  /** Trusted root issuers of the children's chains. */
  readonly roots: readonly string[];
  /** The spend ledger's folder every run is debited on. */
  readonly ledger: string;
  readonly argv: readonly string[];
  /** The sandbox's limits, as `sbx run`'s --memory, --cpus, --pids. */
  readonly limits?: SandboxOptions["limits"];
  readonly timeoutMs?: number;
  /** Keep the run's output and record in `<child dir>/run/` (as `sbx run --out` writes them). */
  readonly keepRecord?: boolean;
  /** Aborting stops the run that is going (SIGTERM, then SIGKILL after the grace period). */
  readonly abort?: AbortSignal;
  readonly onOutput?: RunUnitOptions["onOutput"];
}

/**
 * childRunner returns the run callback of a StandingDriver (./driver.ts) that runs `o.argv` under
 * each child's chain, in the child's folder: its workspace `work/`, its record in `run/` (with
 * keepRecord). The outcome's `run` is `sbx run --json`'s object (runSummary, with the debit as
 * `grant`); its exit is 0 when the command exited 0. Throws openGrantRun's refusals (verifyChain's
 * codes, GrantsInsufficient, BudgetExhausted, …) and runGranted's.
 */
export function childRunner(o: ChildRunOptions): (c: ChildRun) => Promise<ChildRunOutcome> {
  return async (c) => {
    const workspace = join(c.dir, "work");
    mkdirSync(workspace, { recursive: true });
    const sandbox: SandboxOptions = { workspace, ...(o.limits ? { limits: o.limits } : {}) };
    const terms = { chains: [c.chain], roots: o.roots, hosts: [o.hostKey.did], ledger: o.ledger };
    const grant = openGrantRun(terms, o.hostKey, sandbox);
    const unit = makeUnit({ argv: o.argv, manifest: NONE, level: "S4" });
    const id = unitId(unit);
    const record = o.keepRecord === true ? join(c.dir, "run") : undefined;
    if (record !== undefined) mkdirSync(record, { recursive: true });
    const { result, debit } = await runGranted(
      {
        argv: o.argv,
        hostKey: o.hostKey,
        unitId: id,
        unit,
        grantsId: grant.grantsId,
        manifest: NONE,
        pinnedImage: null,
        policy: NONE,
        sandbox,
        ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
        ...(o.abort ? { abort: o.abort } : {}),
        ...(record !== undefined ? { outputDir: record } : {}),
        ...(o.onOutput ? { onOutput: o.onOutput } : {}),
      },
      grant,
    );
    if (record !== undefined) writeRunFiles(record, result, unit);
    const run = {
      ...runSummary(result, { unitId: id, host: o.hostKey.did, workspace }),
      ...(debit ? { grant: debit } : {}),
    };
    const ok = result.outcome.status === "exited" && result.outcome.exit_code === 0;
    return { run, exit: ok ? 0 : 1 };
  };
}
