// `sbx suspend`, `sbx resume`, `sbx close`: the lifecycle of a durable run (sandbox-attest §13) kept
// in the run store. Each first asks the run's supervisor on this host (the process holding its
// sandbox); with none live, it acts on the record itself under the run's lock.
import { EXIT, parseOptions, UsageError, type Command, type Io } from "../../command.ts";
import { openAnyRunStore, storeArgOf } from "@sbx/host/stores";
import { askSupervisor } from "@sbx/host/durable";
import { closeDirect, suspendDirect } from "./lifecycle/direct.ts";
import { runPaths } from "@sbx/host/durable";
import { refuseKeyForResident, runKeyDid, runKeyOf } from "./lifecycle/runkey.ts";
import { resolveStoreRun } from "@sbx/host/stores";
import { resumeByRestore } from "./lifecycle/resume.ts";
import { spawnDetached } from "./lifecycle/detach.ts";
import { exitOf } from "./lifecycle/start.ts";
import { GRANT_OPTIONS } from "../../flags/grant.ts";
import {
  CHECKPOINT_HELP,
  CHECKPOINT_OPTIONS,
  checkpointAtSuspend,
  checkpointRequest,
} from "./lifecycle/checkpoint.ts";

const STORE_HELP = `  --store DIR|URL  the run store (default $SBX_STORE, else $XDG_DATA_HOME/sbx or ~/.local/share/sbx);
                   postgres://… is the PostgreSQL store shared by many hosts (local state: $SBX_LOCAL_DIR)`;

function show(io: Io, what: string, r: unknown): void {
  const o = r as Record<string, unknown>;
  io.out(
    `${what} ${Object.entries(o)
      .filter(([, v]) => typeof v !== "object")
      .map(([k, v]) => `${k} ${String(v)}`)
      .join("  ")}`,
  );
}

const suspend: Command = {
  name: "suspend",
  summary: "park a durable run: freeze its sandbox, snapshot the workspace, append a suspended segment",
  help: `usage: sbx suspend RUN [--release] [--store DIR]
  Parks the run (§13): its sandbox's processes are frozen (cgroup freezer), the interval that ran is
  attested and appended as an executed segment, the workspace is snapshotted into the store, and a
  suspended segment with the snapshot and manifest addresses is appended. Without --release the
  frozen processes stay resident on this host (sbx resume thaws them); with it they are ended and
  only the snapshot is kept. A run whose command already ended is snapshotted from its workspace.
  --release        end the processes and free the sandbox after the snapshot
${CHECKPOINT_HELP}
${STORE_HELP}
exit: 0 parked, 1 refused (the code says why: PhaseViolation, RecordClosed, RunBusy…), 2 usage error`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      release: { type: "boolean" },
      store: { type: "string" },
      ...CHECKPOINT_OPTIONS,
    });
    if (positionals.length > 1) throw new UsageError("sbx suspend takes one run id");
    const store = await openAnyRunStore(values.store, false);
    const id = await resolveStoreRun(store, positionals[0]);
    // The ledger's metering host is the key the run signs with here (none made for this).
    const cp = checkpointRequest(values, () => runKeyDid(store.root, runPaths(store.root, id)));
    const release = values.release === true;
    const asked = await askSupervisor(runPaths(store.root, id).socket, { op: "suspend", release });
    const say = (l: string) => io.err(`sbx: ${l}`);
    show(io, "suspended", asked?.result ?? (await suspendDirect(store, id, say)));
    // jcp §4.7: the holder's checkpoint of the parked run (lifecycle/checkpoint.ts).
    if (cp !== null) show(io, "checkpoint", await checkpointAtSuspend(store, id, cp));
    return EXIT.ok;
  },
};

const resume: Command = {
  name: "resume",
  summary: "resume a parked durable run: verify, check snapshot and manifest, account idle energy, continue",
  help: `usage: sbx resume RUN [--store DIR] [--key FILE] [--workspace DIR] [--detach] [-- CMD [ARGS…]]
  Resumes a parked run (§13.4): the record is verified from genesis (every attestation and the energy
  receipt chain), the snapshot is checked by address (SnapshotMismatch when what this host can offer
  differs from what was recorded) and the manifest by satisfaction on this host (EnvironmentMismatch),
  the idle energy of what was retained while parked (frozen memory, the stored snapshot) is estimated
  with its model and stated as estimated (§13.6), and the resumed segment is appended. Then the
  frozen processes are thawed; or, when none are resident here (released, or another host or
  store), the workspace is restored into a fresh sandbox and CMD (default: the unit's own command)
  starts in it, this command supervising it until it ends, is suspended or closed.
  --key FILE       sign with this key; without it, the key the run was started (or last resumed)
                   with on this host, else the store's host-key.pem (made, and said, if none);
                   a key other than the run's is said, naming both did:keys, and used from then on
  --workspace DIR  restore into DIR (absent or empty) instead of a fresh directory
  --detach         supervise the restored sandbox in the background; print the run id and return
  --images DIR     the image store (§14.9): when the run's manifest pins an image, this store must
                   hold it with the same bytes (else ImageNotInStore, ImageDigestMismatch), and the
                   workspace is restored onto that image's verified rootfs, with the manifest's env,
                   user, workspace folder and limits (default: images/ in the run store)
  A run started under --grant resumes only under its grant in force (jcp §4.5, §4.7), with the
  same --trust and --ledger (and --revocations, --amendments, --ledger-host) as sbx run; the chain
  is the one the run names (or --grant CHAIN, the same grant set). Refused: Revoked, Expired,
  BudgetExhausted (an amendment below what is spent included). The idle energy is debited on the
  ledger citing the resumed segment, and debits a crash left owed are made once.
${STORE_HELP}
exit: 0 resumed (and, in the foreground, the command exited 0 or the run was parked or closed),
      1 refused or the command failed, 2 usage error`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      store: { type: "string" },
      key: { type: "string" },
      workspace: { type: "string" },
      detach: { type: "boolean" },
      images: { type: "string" },
      ...GRANT_OPTIONS,
    });
    const dash = args.indexOf("--");
    const cmd = dash < 0 ? [] : args.slice(dash + 1);
    const own = dash < 0 ? positionals : positionals.slice(0, positionals.length - cmd.length);
    if (own.length > 1) throw new UsageError("sbx resume takes one run id; the command goes after --");
    const store = await openAnyRunStore(values.store, false);
    const id = await resolveStoreRun(store, own[0]);
    const paths = runPaths(store.root, id);
    const say = (l: string) => io.err(`sbx: ${l}`);
    if (values.key !== undefined) await refuseKeyForResident(paths, id, values.key);
    const asked = await askSupervisor(paths.socket, { op: "resume" });
    if (asked !== undefined) {
      if (cmd.length > 0)
        io.err("sbx: the run's processes were resident here and were thawed; CMD was not run");
      show(io, "resumed", asked.result);
      return EXIT.ok;
    }
    // Chosen (and said) before a detached child takes over, so it is said on this terminal.
    const { key: hostKey, ref: keyRef } = runKeyOf(store.root, paths, id, values.key, say);
    if (values.detach === true) return spawnDetached(storeArgOf(store), ["resume", ...args], io);
    io.err(`sbx: resuming ${id}, signed by ${hostKey.did} (${keyRef.path})`);
    const end = await resumeByRestore(
      {
        store,
        id,
        hostKey,
        keyRef,
        cmd,
        sandbox: {},
        ...(values.workspace ? { workspace: values.workspace } : {}),
        ...(values.images ? { images: values.images } : {}),
        grantValues: values,
      },
      io,
    );
    return exitOf(end);
  },
};

const close: Command = {
  name: "close",
  summary: "close a durable run (active or parked): append the closed segment",
  help: `usage: sbx close RUN [--outcome completed|failed|abandoned] [--store DIR]
  Closes the run (§13.2) from any phase: a running interval is attested and appended first and its
  processes ended; frozen processes are ended. The outcome defaults to abandoned for a parked run,
  completed when the last interval exited 0, else failed. Nothing can be appended after close.
  --outcome O      completed, failed or abandoned
${STORE_HELP}
exit: 0 closed, 1 refused (RecordClosed, RunBusy…), 2 usage error`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      outcome: { type: "string" },
      store: { type: "string" },
    });
    if (positionals.length > 1) throw new UsageError("sbx close takes one run id");
    const o = values.outcome ?? null;
    if (o !== null && !["completed", "failed", "abandoned"].includes(o))
      throw new UsageError("--outcome must be completed, failed or abandoned");
    const store = await openAnyRunStore(values.store, false);
    const id = await resolveStoreRun(store, positionals[0]);
    const asked = await askSupervisor(runPaths(store.root, id).socket, { op: "close", outcome: o });
    const say = (l: string) => io.err(`sbx: ${l}`);
    show(io, "closed", asked?.result ?? (await closeDirect(store, id, o, say)));
    return EXIT.ok;
  },
};

export const commands: Command[] = [suspend, resume, close];
