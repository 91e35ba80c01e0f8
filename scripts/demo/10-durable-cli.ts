// Demo part 10: a durable run from the command line (§13). An agent-like program, working in steps
// and keeping its state in its workspace, runs in the S1 sandbox under `sbx run --detach`; after
// step 4 it waits for a reviewer's approval, and there it is suspended (frozen, snapshotted,
// released). The run moves to a second store whose host has its own key, is resumed there in a
// fresh sandbox with the approval given, finishes, is closed, and `sbx verify` trusts both host keys.
// Its result equals an uninterrupted run's, and its energy is receipts + idle, segment by segment.
// The move is `sbx export` on host A and `sbx import` on host B, which verifies everything first.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseDigest, toHex, type Digest } from "@sbx/wire";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import { FileStore } from "@sbx/host/store";
import { sandboxUnavailableReason } from "@sbx/host/sandbox";
import { check, type DemoContext } from "./context.ts";

const SBX = join(import.meta.dirname, "..", "..", "packages", "cli", "bin", "sbx.mjs");

// The agent: eight steps of work, each folding the previous line into the next (so the result
// depends on every step having run once, in order), its step counter in `state`. After step 4 it
// waits until the file `approved` exists: a checkpoint for review.
const AGENT = `#!/bin/sh
n=$(cat state 2>/dev/null || echo 0)
[ -e dataset.bin ] || head -c 8388608 /dev/zero > dataset.bin
while [ "$n" -lt 8 ]; do
  n=$((n+1))
  prev=$(tail -n 1 notes.txt 2>/dev/null || echo seed)
  echo "$n $(printf '%s/%s' "$prev" "$n" | sha256sum | cut -c1-16)" >> notes.txt
  echo $n > state
  echo "agent: step $n done"
  while [ "$n" = 4 ] && [ ! -e approved ]; do sleep 0.02; done
done
tail -n 1 notes.txt > result
`;

interface Ran {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

function sbx(args: readonly string[]): Promise<Ran> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [SBX, ...args]);
    let out = "";
    let err = "";
    p.stdout.on("data", (b: Buffer) => (out += b.toString()));
    p.stderr.on("data", (b: Buffer) => (err += b.toString()));
    p.on("close", (code) => resolve({ code, out, err }));
  });
}

async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 25));
}

function workspace(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "agent.sh"), AGENT);
  chmodSync(join(dir, "agent.sh"), 0o755);
  return dir;
}

const text = (p: string): string => (existsSync(p) ? readFileSync(p, "utf8").trim() : "");

async function energyTable(ctx: DemoContext, store: FileStore, id: Digest): Promise<bigint> {
  const bytes = await store.readRecordBytes(id);
  check(bytes !== null, "record");
  let total = 0n;
  for (const [i, seg] of decodeRecord(bytes).record.segments.entries()) {
    let line = `${String(i + 1).padStart(2)} ${seg.kind.padEnd(9)}`;
    if (seg.kind === "executed") {
      const p = verifyAttestation(await store.getSigned(seg.attestation)).predicate;
      total += BigInt(p.energy.total_uj);
      const o = p.outcome;
      const how =
        o.status === "exited"
          ? `exited ${String(o.exit_code)}`
          : o.status === "signaled"
            ? o.signal
            : o.reason;
      line += ` ${p.energy.total_uj.padStart(9)} µJ ${p.energy.provenance} (receipt), ${how}, host ${p.host.slice(0, 20)}…, level ${p.level}`;
    } else if (seg.kind === "resumed") {
      total += BigInt(seg.idle_uj);
      line += ` ${seg.idle_uj.padStart(9)} µJ ${seg.idle_provenance} (idle: ${seg.idle_source}, ${Object.entries(
        seg.idle_basis ?? {},
      )
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")})`;
    } else if (seg.kind === "suspended") line += ` snapshot ${seg.snapshot.fs_root.slice(0, 23)}…`;
    else if (seg.kind === "moved") line += ` to ${seg.to}`;
    else line += ` ${seg.outcome}`;
    ctx.say(line);
  }
  return total;
}

export default async function durableCli(ctx: DemoContext): Promise<void> {
  ctx.title("durable run from the command line: run → suspend → move to another host → resume → close (§13)");
  const why = sandboxUnavailableReason();
  if (why !== null) throw new Error(`demo part 10 needs the S1 sandbox: ${why}`);
  const storeA = join(ctx.work, "store10-host-a");
  const storeB = join(ctx.work, "store10-host-b");

  // The same program, uninterrupted (approved from the start), for comparison.
  const plain = workspace(join(ctx.work, "ws10-plain"));
  writeFileSync(join(plain, "approved"), "");
  const u = await sbx(["run", "--store", storeA, "--workspace", plain, "--", "/work/agent.sh"]);
  check(u.code === 0, `uninterrupted run exits 0: ${u.err}`);
  const want = text(join(plain, "result"));
  ctx.say(`uninterrupted run: result ${want}`);

  const ws = workspace(join(ctx.work, "ws10-a"));
  const r = await sbx(["run", "--detach", "--store", storeA, "--workspace", ws, "--", "/work/agent.sh"]);
  check(r.code === 0, `sbx run --detach exits 0: ${r.err}`);
  const id = /^run (blake3:[0-9a-f]{64})$/m.exec(r.out)?.[1] as Digest;
  ctx.say(`$ sbx run --detach --store A --workspace ws -- /work/agent.sh  →  run ${id.slice(0, 27)}…`);
  await waitFor(() => text(join(ws, "state")) === "4");
  // First parked on host A with its processes frozen in memory, then thawed: idle memory counted.
  const f = await sbx(["suspend", id, "--store", storeA]);
  check(f.code === 0 && f.out.includes("released false"), `sbx suspend (frozen) exits 0: ${f.err}`);
  ctx.say(`$ sbx suspend RUN  (processes frozen in place; snapshot of the workspace stored)`);
  await new Promise((r) => setTimeout(r, 1000)); // parked a while, so the idle figure is visible
  const t = await sbx(["resume", id, "--store", storeA]);
  check(t.code === 0 && t.out.includes("thawed true"), `sbx resume (thaw) exits 0: ${t.err}`);
  ctx.say(
    `$ sbx resume RUN  (record verified, workspace re-addressed, manifest checked, idle estimated, thawed)`,
  );
  const s = await sbx(["suspend", id, "--release", "--store", storeA]);
  check(s.code === 0, `sbx suspend exits 0: ${s.err}`);
  ctx.say(`$ sbx suspend RUN --release  (agent at step ${text(join(ws, "state"))} of 8, awaiting approval)`);
  ctx.say(`  ${s.out.trim().slice(0, 150)}…`);

  const archive = join(ctx.work, "run10.tar");
  const ex = await sbx(["export", id, "--store", storeA, "--out", archive]);
  check(ex.code === 0, `sbx export exits 0: ${ex.err}`);
  ctx.say(`$ sbx export RUN --store A --out run.tar  (the record and every object it references)`);
  const im = await sbx(["import", archive, "--store", storeB, "--trust", join(storeA, "host-key.pub.pem")]);
  check(im.code === 0 && im.out.startsWith("imported"), `sbx import exits 0: ${im.err}`);
  ctx.say(`$ sbx import run.tar --store B --trust A.pub  →  ${im.out.trim().slice(0, 110)}…`);
  await new Promise((r) => setTimeout(r, 1000)); // parked a while, so the snapshot's idle figure is visible

  const res = await sbx([
    "resume",
    id,
    "--store",
    storeB,
    "--",
    "/bin/sh",
    "-c",
    "touch approved; exec ./agent.sh",
  ]);
  check(res.code === 0, `sbx resume on host B exits 0: ${res.err}`);
  for (const l of res.out.split("\n").filter((x) => x.startsWith("agent:"))) ctx.say(`  ${l}`);
  const into = /into (\S+);/.exec(res.err)?.[1] ?? "";
  const got = text(join(into, "result"));
  ctx.say(`$ sbx resume RUN --store B -- sh -c 'touch approved; exec ./agent.sh'  →  result ${got}`);
  check(got === want && got !== "", `result equals the uninterrupted run's (${got} vs ${want})`);
  const c = await sbx(["close", id, "--store", storeB]);
  check(c.code === 0 && c.out.includes("outcome completed"), `sbx close: ${c.err}`);

  const rec = join(storeB, "records", `${toHex(parseDigest(id))}.runrecord`);
  const v = await sbx([
    "verify",
    rec,
    "--trust",
    join(storeA, "host-key.pub.pem"),
    "--trust",
    join(storeB, "host-key.pub.pem"),
  ]);
  check(v.code === 0 && v.out.includes("verdict: VALID"), `sbx verify with both host keys: ${v.out}${v.err}`);
  const signers = /^signers: (.*)$/m.exec(v.out)?.[1] ?? "";
  check(signers.split(", ").length === 2, `two hosts signed (${signers})`);
  ctx.say(`$ sbx verify RUN --trust hostA.pub --trust hostB.pub  →  VALID, signers: 2 hosts`);
  ctx.say("energy per segment:");
  const total = await energyTable(ctx, FileStore.open(storeB, { readOnly: true }), id);
  const line = /^energy: .*$/m.exec(v.out)?.[0] ?? "";
  ctx.say(line);
  check(line.endsWith(`total ${String(total)} µJ`), `total = receipts + idle (${String(total)})`);
}
