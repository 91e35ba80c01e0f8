// §8 Streaming: output reaches the caller while the unit runs and goes to files as it arrives,
// hashed as it goes; an abort (Ctrl-C) is SIGTERM to the unit, SIGKILL after a grace period, and the
// interval is still recorded and attested.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, digestBytes, testKey } from "@sbx/wire";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { runUnit, type RunUnitOptions } from "../../src/run/index.ts";

const none = addressOf({});
const base = { hostKey: testKey("host"), grantsId: none, manifest: none, policy: none };

async function sandboxed(argv: string[], o: Partial<RunUnitOptions> = {}, workspace?: string) {
  const ws = workspace ?? mkdtempSync(join(tmpdir(), "sbx-stream-"));
  try {
    // unitId: the address of the descriptor runUnit builds by default (argv, manifest, level asked).
    const id = unitId(makeUnit({ argv, manifest: none, level: "S0" }));
    return await runUnit({ ...base, unitId: id, argv, sandbox: { workspace: ws }, ...o });
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

/** onFirst calls `then` once, the first time `stream` carries `text`. */
function onFirst(stream: "stdout" | "stderr", text: string, then: () => void) {
  let seen = false;
  return (s: "stdout" | "stderr", d: Uint8Array) => {
    if (!seen && s === stream && Buffer.from(d).toString().includes(text)) {
      seen = true;
      then();
    }
  };
}

// No timing: the unit prints its first line, then waits (up to 60 s) for a file the host creates
// only when that line has reached it. Had output been held until exit, the unit would give up.
test("output arrives while the unit still runs, and goes to files, not memory", async () => {
  const out = mkdtempSync(join(tmpdir(), "sbx-out-"));
  const ws = mkdtempSync(join(tmpdir(), "sbx-stream-"));
  const script =
    "echo first; i=0; while [ ! -e /work/go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; " +
    "[ -e /work/go ] && echo second || echo gave-up; echo err >&2";
  const r = await sandboxed(
    ["/bin/sh", "-c", script],
    {
      outputDir: out,
      onOutput: onFirst("stdout", "first", () => {
        writeFileSync(join(ws, "go"), "");
      }),
    },
    ws,
  );
  assert.equal(r.stdout.length, 0, "nothing is held in memory");
  const file = readFileSync(join(out, "stdout"));
  assert.equal(file.toString(), "first\nsecond\n", "the unit saw the host's answer to its first line");
  assert.equal(r.streams.stdout.digest, digestBytes(file));
  assert.equal(r.streams.stdout.length, file.length);
  assert.equal(readFileSync(join(out, "stderr"), "utf8"), "err\n");
  const chunks = r.journal.events.filter((e) => e.type === "stdio.chunk" && e.stream === "stdout");
  assert.ok(chunks.length >= 1);
  rmSync(out, { recursive: true, force: true });
});

test("abort: SIGTERM reaches the unit, which may end on its own terms; the interval is attested", async () => {
  const abort = new AbortController();
  const r = await sandboxed(
    ["/bin/sh", "-c", "trap 'echo got-term; exit 7' TERM; echo ready; sleep 30 & wait"],
    {
      abort: abort.signal,
      graceMs: 5000,
      onOutput: onFirst("stdout", "ready", () => {
        abort.abort();
      }),
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
  const t0 = Date.now();
  const r = await sandboxed(["/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"], {
    abort: abort.signal,
    graceMs: 300,
    onOutput: onFirst("stdout", "ready", () => {
      abort.abort();
    }),
  });
  assert.ok(Date.now() - t0 < 10_000);
  assert.deepEqual(r.outcome, { status: "signaled", signal: "SIGKILL" });
  assert.equal(verifyAttestation(r.attestation).predicate.level, "S4");
});
