// `sbx run -- CMD…`: runs a command as a unit and prints its attested record: the energy figure
// with its provenance, the journal root and the attestation address (sandbox-attest §6, §7, §8).
import { closeSync, mkdirSync } from "node:fs";
import { basename, dirname } from "node:path";
import { addressOf, generateKeyPair, isDigest, type Digest } from "@sbx/wire";
import { LEVELS, makeUnit, unitId, type Level } from "@sbx/sandbox-attest/unit";
import type { EnergyComponent } from "@sbx/sandbox-attest/energy";
import { parsePinnedImage } from "@sbx/sandbox-attest/manifest";
import {
  runGranted,
  runSummary,
  writeRunFiles,
  type GrantedRun,
  type RunSummary,
  type RunUnitResult,
} from "@sbx/host/run";
import { openRoot, removeTreeAt } from "@sbx/host/fsat";
import {
  EXIT,
  parseOptions,
  printJson,
  UsageError,
  writeBytes,
  type Command,
  type Io,
} from "../../command.ts";
import { readKey } from "@sbx/host/keys";
import { intOpt, sandboxOpts, timeoutOpt } from "../../flags/sandbox.ts";
import { gateOpt } from "./run-gate.ts";
import { manifestOfFile, withManifestImage } from "../../images.ts";
import { GRANT_HELP, GRANT_OPTIONS, checkPolicyFlag, prepareGrantRun } from "../../flags/grant.ts";
import { isDurable, runDurable } from "./lifecycle/start.ts";

/** The address standing for "none given" (no manifest, no exec policy, no grant set): that of {}. */
const NONE = addressOf({});

function digestOpt(v: string | undefined, name: string): Digest {
  if (v === undefined) return NONE;
  if (!isDigest(v)) throw new UsageError(`--${name} must be a blake3:<64 hex> address`);
  return v;
}

function levelOpt(v: string | undefined): Level | undefined {
  if (v === undefined) return undefined;
  if (!(LEVELS as readonly string[]).includes(v))
    throw new UsageError(`--level must be one of ${LEVELS.join(", ")}`);
  return v as Level;
}

type Values = Record<string, string | boolean | readonly string[] | undefined>;
const str = (v: Values, k: string): string | undefined => (typeof v[k] === "string" ? v[k] : undefined);

function describe(c: EnergyComponent): string {
  const how =
    c.provenance === "estimated"
      ? `${c.source}, model ${c.model.name}`
      : c.provenance === "attributed"
        ? `${c.source} × ${c.ratio.numerator}/${c.ratio.denominator}`
        : c.source;
  return `${c.domain} ${c.uj} µJ ${c.provenance} (${how})`;
}

function outcomeText(r: RunUnitResult): string {
  const o = r.outcome;
  const why = o.status !== "spawn_failed" && o.stopped !== undefined ? `, stopped: ${o.stopped}` : "";
  return (
    (o.status === "exited"
      ? `exited ${o.exit_code}`
      : o.status === "signaled"
        ? `killed by ${o.signal}`
        : `did not start (${o.reason})`) + why
  );
}

/** removeTemporary removes a default workspace, however deep the unit made its tree (fsat). */
function removeTemporary(ws: string): void {
  const parent = openRoot(dirname(ws));
  try {
    removeTreeAt(parent, basename(ws));
  } finally {
    closeSync(parent);
  }
}

function printHuman(io: Io, r: RunUnitResult, s: RunSummary): void {
  io.out(`unit         ${s.unit_id}`);
  io.out(`outcome      ${outcomeText(r)} after ${s.interval.end_ms - s.interval.start_ms} ms`);
  io.out(
    `energy       ${s.energy.total_uj} µJ, ${s.energy.provenance}${s.energy.absent.length ? ` (absent: ${s.energy.absent.join(", ")})` : ""}`,
  );
  for (const c of s.energy.components) io.out(`               ${describe(c)}`);
  io.out(`journal      ${s.journal.root} (${s.journal.events} events)`);
  io.out(`receipt      ${s.receipt}`);
  io.out(`attestation  ${s.attestation} (level ${s.level}, host ${s.host})`);
  const p = r.provided;
  if (p === null) io.out("sandbox      none (--unsandboxed): a plain process on the host, level S0");
  else {
    const l = p.limits;
    io.out(
      `sandbox      workspace ${s.workspace ?? "(a temporary one, removed)"} at ${p.workspaceFolder}, user ${p.user.name} (host uid ${p.hostUid}), ${p.network === "none" ? "no network" : `network: host loopback port${p.network.loopback.length > 1 ? "s" : ""} ${p.network.loopback.join(", ")} only`}`,
    );
    io.out(
      `limits       memory ${l.memoryBytes} B, cpu ${l.cpuMillis / 1000}, pids ${l.pids}, /tmp ${p.tmpBytes} B`,
    );
  }
  if (r.gate !== null)
    io.out(
      `exec gate    ${r.gate.held ? "held" : "NOT held"}, ${r.gate.marked} mounts marked, ${r.journal.events.filter((e) => e.type === "exec.decision").length} decisions journaled`,
    );
  const h = r.limits;
  if (h && (h.oomKills > 0 || h.pidsRefused > 0 || h.disk))
    io.out(
      `limits hit   ${[h.oomKills > 0 ? `memory (${h.oomKills} OOM kills)` : "", h.pidsRefused > 0 ? `pids (${h.pidsRefused} forks refused)` : "", h.disk ? "workspace size" : ""].filter((x) => x).join(", ")}`,
    );
}

export const command: Command = {
  name: "run",
  summary: "run a command as a unit: metered, journaled, attested; print energy, journal root, attestation",
  help: `usage: sbx run [--key FILE] [--manifest ADDR] [--policy ADDR] [--grants ADDR] [--level S0…S7]
               [--exec-policy FILE [--steward DID]]
               [--workspace DIR] [--memory SIZE] [--cpus N] [--pids N] [--tmp-size SIZE]
               [--disk SIZE] [--user NAME] | --unsandboxed [--watch DIR]
               [--timeout-ms N] [--grace-ms N] [--out DIR] [--json] -- CMD [ARGS…]
  Runs CMD as one active interval of a unit (§4) in a sandbox (§5): bubblewrap with new user, mount,
  pid, ipc, uts, cgroup and network namespaces (no network), the host's /usr read-only, a generated
  /etc, a private size-limited /tmp, a minimal /dev, a seccomp filter, no capabilities, as an
  unprivileged host uid, in a cgroup that limits memory, CPU and processes and that the meter reads.
  The journal holds the process start (argv, digest of the binary), stdout/stderr by digest, the
  files written in the workspace and the exit (§8); the meter's reading is a signed energy receipt
  (§6); the attestation (§7) binds them and states the level the host provided (§9): S4 in a sandbox,
  S0 with --unsandboxed. CMD's output streams to this terminal as it runs; Ctrl-C sends SIGTERM to
  the unit and SIGKILL after the grace period, and the interval is still attested.
  --key FILE       host key file (sbx keygen); default: a fresh key for this run only
  --manifest ADDR  environment manifest address (§14); default: the address of {} (none)
  --manifest FILE  a devcontainer.json whose image is pinned (sbx manifest pin): the unit runs on
                   that image's verified rootfs with its env, user, workspace folder and
                   hostRequirements as limits (§14.9); the manifest's address is the unit's.
                   A durable run stores the manifest in its run store, and every sandbox of the
                   run, a resume's too, runs on the image (§14.9.7); a durable run's
                   --manifest ADDR names a manifest its run store holds, and runs on its image
  --images DIR     the image store for --manifest FILE (default: images/ in the run store)
  --policy ADDR    exec policy address (§5.5); default: the address of {} (none)
  --exec-policy FILE  gate every exec inside the sandbox by content (§5.5.5): FILE is a plain or a
                   signed exec policy (sbx policy); its address is the one attested. Refused execs
                   fail with EACCES and are journaled (exec.decision). The gate attaches before CMD
                   runs; where it cannot, the run is refused, never run ungated
  --steward DID    with --exec-policy: FILE must be signed by this steward
  --grants ADDR    grant set address, grants_id (§4.3); default: the address of {} (none)
  --level L        state at most L (§9): lowers the level provided, never raises it
  --workspace DIR  the unit's workspace, mounted at /work, the only writable tree; it is handed to
                   the sandbox's unprivileged host uid (65534). Default: a fresh empty directory,
                   removed when a one-shot run ends (a durable run keeps it)
  --memory SIZE    memory limit, swap included (default 1 GiB); bytes or 512m, 1G, 1GiB
  --cpus N         CPU limit in CPUs, e.g. 0.5 (default 2); at most this host's CPUs
  --pids N         most processes and threads at once (default 512)
  --tmp-size SIZE  size of the private /tmp (default 64 MiB)
  --disk SIZE      largest workspace (default 1 GiB), bounded as the unit writes: past it, ENOSPC
  --user NAME      the user inside (a manifest's remoteUser); root inside is never root outside
  --unsandboxed    run CMD as a plain child process on the host: level S0, stated as such
  --watch DIR      with --unsandboxed: journal the files CMD creates or changes under DIR
  --timeout-ms N   kill the command with SIGKILL after N ms
  --grace-ms N     after Ctrl-C, wait N ms between SIGTERM and SIGKILL (default 2000)
  --out DIR        write stdout and stderr there as they arrive, then unit.json, attestation.json,
                   receipt.json, journal.json
  --json           print the record as JSON, and nothing else, on stdout (CMD's output goes to
                   stderr, so sbx run --json -- CMD | jq works). Everything after -- is CMD's,
                   options such as -h included
${GRANT_HELP}
  --durable        a durable run (§13) in the run store: a unit with a fresh nonce, an executed
                   segment per active interval, the run id printed first; sbx suspend/resume/close
                   act on it while this command supervises its sandbox (implied by --store and
                   --detach); the key defaults to the store's host-key.pem; Ctrl-C parks the
                   run (as sbx suspend --release) instead of losing the interval
                   With --exec-policy every interval is gated, the first and each resumed one;
                   the policy is stored and named by the unit (label exec_policy), so a resume
                   here or on another host applies it, or is refused (ObjectMissing,
                   ObjectMismatch, GateUnavailable)
  --store DIR      the run store of a durable run (default $SBX_STORE, else ~/.local/share/sbx)
  --detach         a durable run supervised in the background: print the run id and return
exit: 0 the command exited 0, 1 it exited non-zero, was killed or did not start, 2 usage error`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      key: { type: "string" },
      manifest: { type: "string" },
      policy: { type: "string" },
      "exec-policy": { type: "string" },
      steward: { type: "string" },
      grants: { type: "string" },
      level: { type: "string" },
      unsandboxed: { type: "boolean" },
      workspace: { type: "string" },
      memory: { type: "string" },
      cpus: { type: "string" },
      pids: { type: "string" },
      "tmp-size": { type: "string" },
      disk: { type: "string" },
      user: { type: "string" },
      "grace-ms": { type: "string" },
      "timeout-ms": { type: "string" },
      watch: { type: "string" },
      out: { type: "string" },
      json: { type: "boolean" },
      images: { type: "string" },
      ...GRANT_OPTIONS,
      // durable runs (§13): lifecycle/start.ts
      store: { type: "string" },
      detach: { type: "boolean" },
      durable: { type: "boolean" },
    });
    if (positionals.length === 0) throw new UsageError("a command after -- is required");
    const timeoutMs = timeoutOpt(values["timeout-ms"]);
    const graceMs = intOpt(values["grace-ms"], "grace-ms", 0);
    const maxLevel = levelOpt(values.level);
    // §14.9 --manifest FILE: a pinned devcontainer.json whose image is the unit's system.
    const fromFile =
      values.manifest !== undefined && !isDigest(values.manifest) ? manifestOfFile(values.manifest) : null;
    if (fromFile && (values.unsandboxed === true || values.user !== undefined))
      throw new UsageError(
        "--manifest FILE runs in its image's sandbox, with its user: no --unsandboxed, no --user",
      );
    const manifest = fromFile?.address ?? digestOpt(values.manifest, "manifest");
    const grantsId = digestOpt(values.grants, "grants");
    const policyFlag = values.policy === undefined ? undefined : digestOpt(values.policy, "policy");
    const gate = gateOpt(values["exec-policy"], values.steward, policyFlag, values.unsandboxed !== true);
    const policy = gate?.policy ?? policyFlag ?? NONE;
    const durable = isDurable(values);
    // Last, once every other flag is valid: it may create the default workspace.
    const plain = sandboxOpts(values);
    const sandbox =
      fromFile && plain
        ? withManifestImage(plain, fromFile, values.images, str(values, "store")).sandbox
        : plain;
    if (durable)
      return runDurable(
        {
          values,
          args,
          argv: positionals,
          sandbox,
          manifest,
          grantsId,
          policy,
          gate,
          ...(maxLevel ? { maxLevel } : {}),
          ...(fromFile ? { pinned: fromFile } : {}),
        },
        io,
      );
    const hostKey = values.key ? readKey(values.key) : generateKeyPair();
    const grant = prepareGrantRun(values, hostKey, values.key !== undefined, sandbox);
    if (grant && values.grants !== undefined)
      throw new UsageError("--grant computes grants_id: drop --grants");
    // A grant's /exec/ resources gate the run, composed with --exec-policy (runGranted).
    if (grant) checkPolicyFlag(grant, gate, policyFlag);
    const asked = maxLevel ?? (sandbox ? "S4" : "S0");
    const unit = makeUnit({ argv: positionals, manifest, level: asked });
    const id = unitId(unit);
    if (values.out) mkdirSync(values.out, { recursive: true });
    // Ctrl-C stops the unit gracefully (SIGTERM, then SIGKILL after the grace period); the interval
    // is still recorded and attested.
    const abort = new AbortController();
    const stop = () => {
      abort.abort();
    };
    process.on("SIGINT", stop).on("SIGTERM", stop);
    // A one-shot run's default workspace is this run's alone: nothing names it after, so it goes.
    const temporary = sandbox !== null && values.workspace === undefined;
    let ran: GrantedRun;
    try {
      ran = await runGranted(
        {
          argv: positionals,
          hostKey,
          unitId: id,
          unit,
          grantsId,
          manifest,
          // §14.9.6 What the attested manifest pins, from the manifest itself (a bare address: unknown).
          ...(fromFile
            ? { pinnedImage: parsePinnedImage(fromFile.environment.image)?.sha256 ?? null }
            : manifest === NONE
              ? { pinnedImage: null }
              : {}),
          policy,
          ...(gate ? { execPolicy: gate.execPolicy } : {}),
          ...(maxLevel ? { maxLevel } : {}),
          ...(sandbox ? { sandbox } : {}),
          ...(timeoutMs ? { timeoutMs } : {}),
          ...(graceMs !== undefined ? { graceMs } : {}),
          abort: abort.signal,
          ...(values.watch ? { watch: values.watch } : {}),
          ...(values.out ? { outputDir: values.out } : {}),
          // With --json, stdout carries the JSON alone: the command's own output goes to stderr.
          onOutput: (stream, data) => {
            writeBytes(io, stream === "stdout" && !values.json ? "out" : "err", data);
          },
        },
        grant,
      );
    } finally {
      process.off("SIGINT", stop).off("SIGTERM", stop);
      if (temporary) removeTemporary(sandbox.workspace);
    }
    const { result: r, debit } = ran;
    const s = {
      ...runSummary(r, {
        unitId: id,
        host: hostKey.did,
        workspace: temporary ? null : (sandbox?.workspace ?? null),
      }),
      ...(debit ? { grant: debit } : {}),
    };
    if (values.out) writeRunFiles(values.out, r, unit);
    if (values.json) printJson(io, s);
    else printHuman(io, r, s);
    if (debit && !values.json)
      io.out(
        `grant        debited ${String(BigInt(debit.spent_uj) - BigInt(debit.overshoot_uj))} µJ on ${debit.ledger}; ${debit.remaining_uj} µJ remain` +
          (debit.overshoot_uj === "0"
            ? ""
            : `; ${debit.overshoot_uj} µJ beyond the budget recorded as overshoot`),
      );
    return r.outcome.status === "exited" && r.outcome.exit_code === 0 ? EXIT.ok : EXIT.invalid;
  },
};
