// §8 Streaming: output reaches the caller while the unit runs and goes to files as it arrives,
// hashed as it goes; an abort (Ctrl-C) is SIGTERM to the unit, SIGKILL after a grace period, and the
// interval is still recorded and attested.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, digestBytes, testKey } from "@sbx/wire";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { runUnit, type RunUnitOptions } from "../../src/run/index.ts";

const none = addressOf({});
const base = { hostKey: testKey("host"), grantsId: none, manifest: none, policy: none };

async function sandboxed(argv: string[], o: Partial<RunUnitOptions> = {}) {
  const ws = mkdtempSync(join(tmpdir(), "sbx-stream-"));
  try {
    // unitId: the address of the descriptor runUnit builds by default (argv, manifest, level asked).
    const id = unitId(makeUnit({ argv, manifest: none, level: "S0" }));
    return await runUnit({ ...base, unitId: id, argv, sandbox: { workspace: ws }, ...o });
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

test("output arrives while the unit still runs, and goes to files, not memory", async () => {
  const out = mkdtempSync(join(tmpdir(), "sbx-out-"));
  let firstAt = 0;
  const t0 = Date.now();
  const r = await sandboxed(["/bin/sh", "-c", "echo first; sleep 1; echo second; echo err >&2"], {
    outputDir: out,
    onOutput: (s, d) => {
      if (s === "stdout" && d.toString().includes("first") && firstAt === 0) firstAt = Date.now();
    },
  });
  const end = Date.now();
  assert.ok(
    firstAt > 0 && end - firstAt >= 800,
    `first line ${firstAt - t0} ms in, run ended ${end - t0} ms in`,
  );
  assert.equal(r.stdout.length, 0, "nothing is held in memory");
  const file = readFileSync(join(out, "stdout"));
  assert.equal(file.toString(), "first\nsecond\n");
  assert.equal(r.streams.stdout.digest, digestBytes(file));
  assert.equal(r.streams.stdout.length, file.length);
  assert.equal(readFileSync(join(out, "stderr"), "utf8"), "err\n");
  const chunks = r.journal.events.filter((e) => e.type === "stdio.chunk" && e.stream === "stdout");
  assert.equal(chunks.length, 1);
  rmSync(out, { recursive: true, force: true });
});

test("abort: SIGTERM reaches the unit, which may end on its own terms; the interval is attested", async () => {
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 500);
  const r = await sandboxed(
    ["/bin/sh", "-c", "trap 'echo got-term; exit 7' TERM; echo ready; sleep 30 & wait"],
    {
      abort: abort.signal,
      graceMs: 5000,
    },
  );
  assert.match(r.stdout.toString(), /got-term/);
  assert.deepEqual(r.outcome, { status: "exited", exit_code: 7 });
  const p = verifyAttestation(r.attestation).predicate;
  assert.ok(p.interval.end_ms - p.interval.start_ms < 5000);
  assert.equal(r.journal.events.at(-1)?.type, "process.exit");
});

test("abort: a unit that ignores SIGTERM is killed after the grace period", async () => {
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 300);
  const t0 = Date.now();
  const r = await sandboxed(["/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"], {
    abort: abort.signal,
    graceMs: 300,
  });
  assert.ok(Date.now() - t0 < 10_000);
  assert.deepEqual(r.outcome, { status: "signaled", signal: "SIGKILL" });
  assert.equal(verifyAttestation(r.attestation).predicate.level, "S4");
});
