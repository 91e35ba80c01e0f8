// Wire benchmarks (issue: foundation). BLAKE3 bulk against b3sum on the same 256 MiB file; BLAKE3
// small inputs (32–4096 bytes) per implementation against node's SHA-256 (the wire's choice: the JS
// one-chunk compression up to 1024 bytes, native above); Ed25519 sign and verify
// per backend. Figures are medians; ratios are against an anchor measured in this same run.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blake3 as napiBlake3 } from "@napi-rs/blake-hash";
import { blake3 as nobleBlake3 } from "@noble/hashes/blake3.js";
import { createBLAKE3 } from "hash-wasm";
import {
  blake3,
  createBlake3Chunk,
  ed25519,
  ed25519Refusal,
  nobleBackend,
  testKey,
  SMALL_INPUT_MAX,
} from "@sbx/wire";
import { gbps, rate, row, timeCommand, timeRuns } from "./measure.ts";

const MiB = 1024 * 1024;

export default async function wireBench(): Promise<void> {
  const wasm = await createBLAKE3(256);
  const wasmHash = (d: Uint8Array) => {
    wasm.init();
    wasm.update(d);
    return wasm.digest("binary");
  };
  const sha256 = (d: Uint8Array) => createHash("sha256").update(d).digest();

  // Bulk: one 256 MiB file, hashed from memory by each library, and by b3sum from the page cache.
  const size = Number(process.env.BENCH_BULK_MIB ?? 256) * MiB;
  const dir = mkdtempSync(join(tmpdir(), "sbx-bench-"));
  const file = join(dir, "bulk.bin");
  const data = new Uint8Array(size);
  for (let i = 0; i < size; i += 4096) data[i] = i & 255;
  writeFileSync(file, data);
  const buf = readFileSync(file);
  console.log(`BLAKE3 bulk, ${size / MiB} MiB (median of 3):`);
  const b3 = timeCommand(3, "b3sum", ["--num-threads", "1", file]);
  const b3mt = timeCommand(3, "b3sum", [file]);
  const tNative = timeRuns(3, () => napiBlake3(buf));
  const tWasm = timeRuns(3, () => wasmHash(buf));
  const tSha = timeRuns(3, () => sha256(buf));
  const tNoble = timeRuns(1, () => nobleBlake3(buf.subarray(0, 16 * MiB))) * (size / (16 * MiB));
  if (b3 === null) console.log("  b3sum not installed: no anchor (apt-get install b3sum)");
  const anchor = b3 ?? tSha;
  const anchorName = b3 === null ? "node sha256" : "b3sum --num-threads 1";
  if (b3 !== null) row("b3sum --num-threads 1 (anchor, incl. process start)", gbps(size / b3), 1, anchorName);
  if (b3mt !== null) row("b3sum (default threads)", gbps(size / b3mt), anchor / b3mt, anchorName);
  row("@napi-rs/blake-hash (wire bulk path)", gbps(size / tNative), anchor / tNative, anchorName);
  row("hash-wasm", gbps(size / tWasm), anchor / tWasm, anchorName);
  row("@noble/hashes (16 MiB, scaled)", gbps(size / tNoble), anchor / tNoble, anchorName);
  row("node sha256", gbps(size / tSha), anchor / tSha, anchorName);
  rmSync(dir, { recursive: true, force: true });

  // Small inputs: where the per-call cost dominates.
  console.log(
    `BLAKE3 small inputs (hashes/s, median of 5; the wire hashes in-process up to ${SMALL_INPUT_MAX} bytes):`,
  );
  const sink = new Uint8Array(32);
  const chunk = createBlake3Chunk();
  for (const n of [32, 96, 200, 768, 1024, 4096]) {
    const input = new Uint8Array(n).fill(7);
    const reps = 20000;
    const per = (fn: (d: Uint8Array) => unknown) =>
      reps /
      timeRuns(5, () => {
        for (let i = 0; i < reps; i++) fn(input);
      });
    const s = per(sha256);
    const nat = per(napiBlake3);
    const w = per(wasmHash);
    const nb = per((d) => nobleBlake3(d));
    const wire = per(blake3);
    const into =
      n <= SMALL_INPUT_MAX
        ? per((d) => {
            chunk.input.set(d);
            chunk.digestInto(d.length, sink, 0);
          })
        : null;
    console.log(`  ${n} bytes:`);
    row("    node sha256 (anchor)", rate(s), 1, "sha256");
    row("    @napi-rs/blake-hash", rate(nat), nat / s, "sha256");
    row("    hash-wasm", rate(w), w / s, "sha256");
    row("    @noble/hashes", rate(nb), nb / s, "sha256");
    row("    wire blake3 (chosen per size)", rate(wire), wire / s, "sha256");
    if (into !== null) row("    wire createBlake3Chunk (copy in, hash out)", rate(into), into / s, "sha256");
  }

  // Ed25519.
  console.log("Ed25519 (ops/s, median of 5, 64-byte message):");
  const k = testKey("steward");
  const msg = new Uint8Array(64).fill(1);
  for (const b of [ed25519, nobleBackend]) {
    const sig = b.sign(k.seed, msg);
    const reps = b === nobleBackend ? 300 : 3000;
    const signRate =
      reps /
      timeRuns(5, () => {
        for (let i = 0; i < reps; i++) b.sign(k.seed, msg);
      });
    const verifyRate =
      reps /
      timeRuns(5, () => {
        for (let i = 0; i < reps; i++) b.verify(k.publicKey, msg, sig);
      });
    // §2.4: the rule's checks (canonical A and R, neither of small order, S < L) before the backend.
    const ruleRate =
      reps /
      timeRuns(5, () => {
        for (let i = 0; i < reps; i++) ed25519Refusal(k.publicKey, msg, sig, b);
      });
    row(`  ${b.name} sign`, rate(signRate));
    row(`  ${b.name} verify`, rate(verifyRate));
    row(`  §2.4 rule, then ${b.name}`, rate(ruleRate), ruleRate / verifyRate, `${b.name} verify`);
  }
}
