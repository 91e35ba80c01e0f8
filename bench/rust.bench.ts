// The two implementations on the same verification work (issue 21): the reference (TypeScript,
// called in process through the conformance harness's handler table) and the Rust verifier in
// impl/rust (timed in its own process by `sbx-adapter --bench`, so no pipe or JSON framing is
// counted), each running the very same conformance vector's op and input. Work: a run record's
// head verification (runrecord.verify of the five-segment record, with expect_head), a fleet
// membership proof (fleet.verify_membership: receipt signature and proof), and a grant chain
// (chain.verify of a three-grant chain). The anchor is the reference, measured in the same run;
// the ratio is reference time / Rust time. Figures are medians of 7 rounds of BATCH calls; the load
// average is printed because this machine is shared.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import type { Json } from "@sbx/wire";
import { handlerTable, loadClasses, readVectorFile, repoRoot, runHandler } from "@sbx/conformance";
import { median, rate, row } from "./measure.ts";

const BATCH = Number(process.env.BENCH_RUST_BATCH ?? 200);
const ROUNDS = 7;
const crate = join(repoRoot, "impl", "rust");
const adapter = join(crate, "target", "release", "sbx-adapter");

interface Work {
  readonly name: string;
  readonly op: string;
  readonly input: Json;
}

/** work picks the benchmarked cases out of the committed vectors, by id. */
function work(): Work[] {
  const all = [
    ...readVectorFile("durable.json"),
    ...readVectorFile("grants.json"),
    ...readVectorFile("core.json"),
  ];
  const byId = (id: string) => {
    const v = all.find((x) => x.id === id);
    if (!v) throw new Error(`vector ${id} not found`);
    return v;
  };
  const record = byId("c6-valid-full");
  const head = (record.output as { head: string }).head;
  return [
    {
      name: "run record head (5 segments)",
      op: record.op,
      input: { ...(record.input as Record<string, Json>), expect_head: head },
    },
    {
      name: "fleet membership (7 items)",
      op: "fleet.verify_membership",
      input: byId("c10-member-3").input,
    },
    { name: "grant chain (3 grants)", op: "chain.verify", input: byId("c16-valid-3").input },
  ];
}

/** ensureAdapter builds the Rust adapter when it is not there yet; refuses when it cannot. */
function ensureAdapter(): void {
  if (existsSync(adapter)) return;
  const r = spawnSync("cargo", ["build", "--release", "--locked"], { cwd: crate, stdio: "inherit" });
  if (r.status !== 0 || !existsSync(adapter))
    throw new Error("cannot build impl/rust (cargo build --release)");
}

/** reference times the TypeScript handler for one case: median seconds per call. */
async function reference(table: ReturnType<typeof handlerTable>, w: Work): Promise<number> {
  const first = await runHandler(table, w.op, w.input);
  if (!first.ok) throw new Error(`${w.name}: reference refused with ${first.error}`);
  const xs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = process.hrtime.bigint();
    for (let k = 0; k < BATCH; k++) await runHandler(table, w.op, w.input);
    xs.push(Number(process.hrtime.bigint() - t) / 1e9 / BATCH);
  }
  return median(xs);
}

/** rust times every case in the Rust verifier's own process: median seconds per call. */
function rust(ws: readonly Work[]): number[] {
  const input = ws.map((w) => JSON.stringify({ op: w.op, input: w.input })).join("\n") + "\n";
  const r = spawnSync(adapter, ["--bench", String(BATCH)], { input, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`sbx-adapter --bench failed: ${r.stderr}`);
  const lines = r.stdout.trim().split("\n");
  return ws.map((w, i) => {
    const out = JSON.parse(lines[i] ?? "null") as { ok?: boolean; s_per_call?: number } | null;
    if (out?.ok !== true || typeof out.s_per_call !== "number") throw new Error(`${w.name}: Rust refused`);
    return out.s_per_call;
  });
}

export default async function main(): Promise<void> {
  ensureAdapter();
  const ws = work();
  const table = handlerTable(await loadClasses());
  console.log(`  load average ${loadavg()[0]!.toFixed(2)}; ${ROUNDS} rounds of ${BATCH} calls each`);
  const ts: number[] = [];
  for (const w of ws) ts.push(await reference(table, w));
  const rs = rust(ws);
  ws.forEach((w, i) => {
    row(`${w.name}, TS reference`, rate(1 / ts[i]!));
    row(`${w.name}, Rust`, rate(1 / rs[i]!), ts[i]! / rs[i]!, "the reference");
  });
}
