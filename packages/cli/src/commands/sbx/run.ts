// `sbx run -- CMD…`: runs a command as a unit and prints its attested record: the energy figure
// with its provenance, the journal root and the attestation address (sandbox-attest §6, §7, §8).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { addressOf, generateKeyPair, isDigest, type Digest } from "@sbx/wire";
import { LEVELS, makeUnit, unitId, type Level } from "@sbx/sandbox-attest/unit";
import { weakestProvenance, type EnergyComponent } from "@sbx/sandbox-attest/energy";
import { runUnit, type RunUnitResult } from "@sbx/host/run";
import {
  EXIT,
  parseOptions,
  printJson,
  UsageError,
  writeBytes,
  type Command,
  type Io,
} from "../../command.ts";
import { readKey } from "../../keyfile.ts";
import { writeJsonOutput, writeOutput } from "../../files.ts";

/** The address standing for "none given" (no manifest, no exec policy, no grant set): that of {}. */
const NONE = addressOf({});

function digestOpt(v: string | undefined, name: string): Digest {
  if (v === undefined) return NONE;
  if (!isDigest(v)) throw new UsageError(`--${name} must be a blake3:<64 hex> address`);
  return v;
}

function levelOpt(v: string | undefined): Level {
  const l = v ?? "S0";
  if (!(LEVELS as readonly string[]).includes(l))
    throw new UsageError(`--level must be one of ${LEVELS.join(", ")}`);
  return l as Level;
}

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
  return o.status === "exited"
    ? `exited ${o.exit_code}`
    : o.status === "signaled"
      ? `killed by ${o.signal}`
      : `did not start (${o.reason})`;
}

function summary(r: RunUnitResult, unit: Digest, host: string, level: Level) {
  const rec = r.receipt.receipt;
  return {
    unit_id: unit,
    outcome: r.outcome,
    interval: r.interval,
    energy: {
      total_uj: rec.total_uj,
      provenance: weakestProvenance(rec.components),
      components: rec.components,
      absent: rec.absent,
    },
    journal: { root: r.journal.head().root, events: r.journal.size },
    receipt: r.receiptAddress,
    attestation: r.address,
    host,
    level,
  };
}

function printHuman(io: Io, r: RunUnitResult, s: ReturnType<typeof summary>): void {
  io.out(`unit         ${s.unit_id}`);
  io.out(`outcome      ${outcomeText(r)} after ${s.interval.end_ms - s.interval.start_ms} ms`);
  io.out(
    `energy       ${s.energy.total_uj} µJ, ${s.energy.provenance}${s.energy.absent.length ? ` (absent: ${s.energy.absent.join(", ")})` : ""}`,
  );
  for (const c of s.energy.components) io.out(`               ${describe(c)}`);
  io.out(`journal      ${s.journal.root} (${s.journal.events} events)`);
  io.out(`receipt      ${s.receipt}`);
  io.out(`attestation  ${s.attestation} (level ${s.level}, host ${s.host})`);
}

function writeOut(dir: string, r: RunUnitResult, unit: unknown): void {
  mkdirSync(dir, { recursive: true });
  const put = (name: string, v: unknown) => {
    writeJsonOutput(join(dir, name), v);
  };
  put("unit.json", unit);
  put("attestation.json", r.attestation);
  put("receipt.json", r.receipt.envelope);
  put("journal.json", { head: r.journal.head(), events: r.journal.events });
  writeOutput(join(dir, "stdout"), r.stdout);
  writeOutput(join(dir, "stderr"), r.stderr);
}

export const command: Command = {
  name: "run",
  summary: "run a command as a unit: metered, journaled, attested; print energy, journal root, attestation",
  help: `usage: sbx run [--key FILE] [--manifest ADDR] [--policy ADDR] [--grants ADDR] [--level S0…S7]
               [--watch DIR] [--timeout-ms N] [--out DIR] [--json] -- CMD [ARGS…]
  Runs CMD as a child process and records it as one active interval of a unit (§4): the journal
  holds the process start (argv, digest of the binary), stdout/stderr by digest and the exit (§8);
  the meter's reading is a signed energy receipt (§6); the attestation (§7) binds them. Prints the
  energy figure with the provenance of every component, the journal root and the attestation
  address. The command's output is printed after it ends (stdout to stdout, stderr to stderr; with
  --json, both to stderr, so stdout holds only the JSON: sbx run --json -- CMD | jq). Everything
  after -- is the command's, options such as -h included.
  --key FILE       host key file (sbx keygen); default: a fresh key for this run only
  --manifest ADDR  environment manifest address (§14); default: the address of {} (none)
  --policy ADDR    exec policy address (§5.5); default: the address of {} (none)
  --grants ADDR    grant set address, grants_id (§4.3); default: the address of {} (none)
  --level L        executor level stated (§9); default S0: sbx run does not itself sandbox
  --watch DIR      journal the files CMD creates or changes under DIR (by digest)
  --timeout-ms N   kill the command with SIGKILL after N ms
  --out DIR        write unit.json, attestation.json, receipt.json, journal.json, stdout, stderr
  --json           print the record as JSON, and nothing else, on stdout
exit: 0 the command exited 0, 1 it exited non-zero, was killed or did not start, 2 usage error`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      key: { type: "string" },
      manifest: { type: "string" },
      policy: { type: "string" },
      grants: { type: "string" },
      level: { type: "string" },
      "timeout-ms": { type: "string" },
      watch: { type: "string" },
      out: { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length === 0) throw new UsageError("a command after -- is required");
    const timeoutMs = values["timeout-ms"] === undefined ? undefined : Number(values["timeout-ms"]);
    if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs < 1))
      throw new UsageError("--timeout-ms must be a positive integer");
    const hostKey = values.key ? readKey(values.key) : generateKeyPair();
    const level = levelOpt(values.level);
    const manifest = digestOpt(values.manifest, "manifest");
    const unit = makeUnit({ argv: positionals, manifest, level });
    const id = unitId(unit);
    // The command runs in its own process group: pass an interrupt on to it.
    const abort = new AbortController();
    const stop = () => {
      abort.abort();
    };
    process.once("SIGINT", stop).once("SIGTERM", stop);
    const r = await runUnit({
      argv: positionals,
      hostKey,
      unitId: id,
      grantsId: digestOpt(values.grants, "grants"),
      manifest,
      policy: digestOpt(values.policy, "policy"),
      level,
      ...(timeoutMs ? { timeoutMs } : {}),
      abort: abort.signal,
      ...(values.watch ? { watch: values.watch } : {}),
    });
    process.off("SIGINT", stop).off("SIGTERM", stop);
    // With --json, stdout carries the JSON alone: the command's own output goes to stderr.
    writeBytes(io, values.json ? "err" : "out", r.stdout);
    writeBytes(io, "err", r.stderr);
    const s = summary(r, id, hostKey.did, level);
    if (values.out) writeOut(values.out, r, unit);
    if (values.json) printJson(io, s);
    else printHuman(io, r, s);
    return r.outcome.status === "exited" && r.outcome.exit_code === 0 ? EXIT.ok : EXIT.invalid;
  },
};
