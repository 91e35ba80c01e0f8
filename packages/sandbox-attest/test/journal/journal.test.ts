// §8 replay journal: numbering, the root over JCS bytes (checked against the literal RFC
// reference), proofs for every event, and refusals by code for every kind of break.
import assert from "node:assert/strict";
import { test } from "node:test";
import { canonicalBytes, digestBytes, formatDigest, utf8, type Json } from "@sbx/wire";
import { blake3Hasher } from "@sbx/sandbox-attest/merkle";
import {
  EVENT_TYPES,
  Journal,
  parseEvent,
  verifyEventInclusion,
  verifyJournal,
  verifyJournalConsistency,
  type EventInput,
} from "@sbx/sandbox-attest/journal";
import { execDecisionEvent } from "@sbx/sandbox-attest/execpolicy";
import { isSandboxAttestError } from "../../src/errors.ts";
import { refMTH } from "../merkle/reference.ts";

const bin = digestBytes(utf8("/usr/bin/python3 contents"));
const out = digestBytes(utf8("hello\n"));
const policy = digestBytes(utf8("an exec policy"));

/** One of each kind, plus a second stdout chunk, as a host would append them. */
function sampleInputs(): EventInput[] {
  return [
    {
      type: "exec.decision",
      policy,
      digest: bin,
      path: "/usr/bin/python3",
      route: "direct",
      rule: "allowed",
      allowed: true,
      source: "hash",
      pid: 4242,
    },
    { type: "process.start", pid: 4242, argv: ["python3", "-c", "print('hello')"], binary: bin },
    { type: "stdio.chunk", stream: "stdout", digest: out, length: "6" },
    { type: "stdio.chunk", stream: "stderr", digest: digestBytes(new Uint8Array(0)), length: "0" },
    { type: "stdio.chunk", stream: "stdout", digest: out, length: "6" },
    { type: "file.write", path: "out/result.txt", digest: out, size: "6" },
    {
      type: "exec.decision",
      policy,
      digest: bin,
      path: "/tmp/x",
      route: "loader",
      rule: "denied",
      allowed: false,
      source: "cache",
      pid: 4242,
    },
    { type: "process.exit", pid: 4242, code: 0, signal: null },
  ];
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return isSandboxAttestError(e) ? e.code : `not a SandboxAttestError: ${String(e)}`;
  }
  return "accepted";
}

function build(inputs = sampleInputs()): Journal {
  const j = new Journal();
  for (const i of inputs) j.append(i);
  return j;
}
const events = (j: Journal): Json[] => j.events.map((e) => ({ ...e }) as unknown as Json);

test("events are numbered by position and stdio chunks per stream", () => {
  const j = build();
  assert.deepEqual(
    j.events.map((e) => e.seq),
    [0, 1, 2, 3, 4, 5, 6, 7],
  );
  const chunks = j.events.flatMap((e) => (e.type === "stdio.chunk" ? [`${e.stream}:${e.chunk}`] : []));
  assert.deepEqual(chunks, ["stdout:0", "stderr:0", "stdout:1"]);
  assert.deepEqual(EVENT_TYPES.toSorted(), [...new Set(j.events.map((e) => e.type))].sort());
});

test("the head binds the count with the MTH of the events' JCS bytes (literal reference)", () => {
  const j = build();
  for (let n = 0; n <= j.size; n++) {
    const want = refMTH(
      blake3Hasher,
      j.events.slice(0, n).map((e) => canonicalBytes(e)),
    );
    assert.deepEqual(j.head(n), { size: n, root: formatDigest(want) }, `size ${n}`);
  }
  assert.equal(new Journal().head().root, digestBytes(new Uint8Array(0)), "empty journal: BLAKE3 of nothing");
  verifyJournal(events(j), j.head() as unknown as Json);
});

test("every event of journals of 1..20 events proves its inclusion", () => {
  const inputs = sampleInputs();
  for (let n = 1; n <= 20; n++) {
    const j = build(Array.from({ length: n }, (_, i) => inputs[i % inputs.length]!));
    const head = j.head() as unknown as Json;
    for (let i = 0; i < n; i++) verifyEventInclusion(head, events(j)[i], j.prove(i) as unknown as Json);
  }
});

test("broken inclusion proofs are refused with InclusionProofInvalid", () => {
  const j = build();
  const head = j.head();
  const i = 5;
  const p = j.prove(i);
  const ev = events(j)[i]!;
  const v = (h: unknown, e: unknown, q: unknown) =>
    code(() => verifyEventInclusion(h as Json, e as Json, q as Json));
  assert.equal(v(head, ev, p), "accepted");
  for (const d of [-1, 1])
    assert.equal(v(head, ev, { ...p, index: i + d }), "InclusionProofInvalid", `index ${d}`);
  for (const size of [head.size * 2, head.size / 2])
    assert.equal(v({ ...head, size }, ev, p), "InclusionProofInvalid", `size ${size}`);
  p.path.forEach((el, k) => {
    const flipped = el.slice(0, -1) + (el.endsWith("0") ? "1" : "0");
    assert.equal(
      v(head, ev, { ...p, path: p.path.map((x, m) => (m === k ? flipped : x)) }),
      "InclusionProofInvalid",
      `flip ${k}`,
    );
    assert.equal(
      v(head, ev, { ...p, path: p.path.filter((_, m) => m !== k) }),
      "InclusionProofInvalid",
      `drop ${k}`,
    );
  });
  assert.equal(v(head, ev, { ...p, path: [...p.path, p.path[0]] }), "InclusionProofInvalid", "added");
  assert.equal(v(head, { ...(ev as object), size: "7" }, p), "InclusionProofInvalid", "event altered");
  assert.equal(v(head, events(j)[4], p), "InclusionProofInvalid", "another event");
  assert.equal(v({ root: head.root }, ev, p), "BadTreeHead", "a root alone");
  assert.equal(v({ ...head, extra: 1 }, ev, p), "BadTreeHead", "head with an extra member");
  assert.equal(v(head, ev, { ...p, path: ["sha256:00"] }), "InclusionProofInvalid", "malformed path");
  assert.equal(v(head, ev, { path: p.path }), "InclusionProofInvalid", "no index");
});

test("a journal differing from its head, or out of order, is refused", () => {
  const j = build();
  const head = j.head() as unknown as Json;
  const evs = events(j);
  const altered = evs.map<Json>((e, k) => (k === 2 ? { ...(e as object), length: "7" } : e));
  assert.equal(
    code(() => verifyJournal(altered, head)),
    "JournalRootMismatch",
  );
  assert.equal(
    code(() => verifyJournal(evs.slice(0, -1), head)),
    "JournalRootMismatch",
  );
  assert.equal(
    code(() => verifyJournal([evs[1]!, evs[0]!, ...evs.slice(2)], head)),
    "EventOutOfOrder",
  );
  const chunkSwap = evs.map<Json>((e, k) =>
    k === 2 ? { ...(e as object), chunk: 1 } : k === 4 ? { ...(e as object), chunk: 0 } : e,
  );
  assert.equal(
    code(() => verifyJournal(chunkSwap, head)),
    "EventOutOfOrder",
  );
});

test("strict event validation: unknown types and members, missing and malformed members", () => {
  const j = build();
  for (const e of events(j)) {
    assert.equal(
      code(() => parseEvent({ ...(e as object), note: "x" })),
      "UnknownEventField",
    );
    for (const k of Object.keys(e as object)) {
      const rest = Object.fromEntries(Object.entries(e as Record<string, Json>).filter(([x]) => x !== k));
      assert.equal(
        code(() => parseEvent(rest)),
        "MalformedEvent",
        `${(e as { type: string }).type} without ${k}`,
      );
    }
  }
  assert.equal(
    code(() => parseEvent({ type: "process.fork", seq: 0 })),
    "UnknownEventType",
  );
  assert.equal(
    code(() => parseEvent({ type: "__proto__", seq: 0 })),
    "UnknownEventType",
  );
  assert.equal(
    code(() => parseEvent([])),
    "MalformedEvent",
  );
  const exit = events(j)[7] as Record<string, Json>;
  assert.equal(
    code(() => parseEvent({ ...exit, signal: "SIGKILL" })),
    "MalformedEvent",
    "code and signal",
  );
  assert.equal(
    code(() => parseEvent({ ...exit, code: null })),
    "MalformedEvent",
    "neither",
  );
  assert.deepEqual(parseEvent({ ...exit, code: null, signal: "SIGKILL" }), {
    ...exit,
    code: null,
    signal: "SIGKILL",
  });
  const bad: [number, string, Json][] = [
    [1, "pid", 0],
    [1, "argv", ["ok", 1]],
    [1, "binary", "sha256:" + "0".repeat(64)],
    [0, "route", "shebang"],
    [0, "allowed", "yes"],
    [0, "rule", "allow:python3"],
    [0, "source", "guess"],
    [0, "policy", null],
    [2, "stream", "stdlog"],
    [2, "length", 6],
    [2, "length", "06"],
    [2, "chunk", -1],
    [5, "size", "18446744073709551616"],
    [5, "path", ""],
    [7, "code", 256],
    [7, "seq", 1.5],
  ];
  for (const [k, m, value] of bad)
    assert.equal(
      code(() => parseEvent({ ...(events(j)[k] as object), [m]: value })),
      "MalformedEvent",
      `${m}=${JSON.stringify(value)}`,
    );
});

test("a refused append leaves the journal as it was; journaled events do not follow the caller's objects", () => {
  const j = build();
  const before = j.head();
  assert.equal(
    code(() => j.append({ type: "process.exit", pid: 1, code: 0, signal: "SIGTERM" })),
    "MalformedEvent",
  );
  assert.deepEqual(j.head(), before);
  const argv = ["sh"];
  j.append({ type: "process.start", pid: 7, argv, binary: bin });
  argv.push("-c");
  assert.deepEqual((j.events[j.size - 1] as unknown as { argv: string[] }).argv, ["sh"]);
});

test("a later head is consistent with every earlier one; broken proofs are refused", () => {
  const j = build([...sampleInputs(), ...sampleInputs()]);
  for (let m = 1; m <= j.size; m++) {
    const p = j.proveConsistency(m);
    verifyJournalConsistency(j.head(m) as unknown as Json, j.head() as unknown as Json, p);
    if (p.length > 0)
      assert.equal(
        code(() =>
          verifyJournalConsistency(j.head(m) as unknown as Json, j.head() as unknown as Json, p.slice(1)),
        ),
        "ConsistencyProofInvalid",
      );
  }
  assert.equal(
    code(() => verifyJournalConsistency(j.head(0) as unknown as Json, j.head() as unknown as Json, [])),
    "ConsistencyProofInvalid",
  );
});

test("the exec gate's own decision records journal as exec.decision events", () => {
  const j = new Journal();
  const allowed = execDecisionEvent(
    {
      digest: bin,
      path: "/usr/bin/python3",
      route: "interpreter",
      rule: "allowed",
      allowed: true,
      source: "hash",
      pid: 9,
    },
    policy,
  );
  const timedOut = execDecisionEvent(
    {
      digest: null,
      path: "/tmp/big",
      route: "direct",
      rule: "timeout",
      allowed: false,
      source: "timeout",
      pid: 9,
    },
    policy,
  );
  for (const e of [allowed, timedOut]) j.append(e);
  assert.deepEqual(
    j.events.map((e) => e.type),
    ["exec.decision", "exec.decision"],
  );
  verifyEventInclusion(j.head() as unknown as Json, { ...timedOut, seq: 1 }, j.prove(1) as unknown as Json);
});

test("an event holding a lone surrogate is refused when appended, not when hashed", () => {
  const j = new Journal();
  assert.throws(
    () => j.append({ type: "file.write", path: "a\ud800", digest: `blake3:${"00".repeat(32)}`, size: "1" }),
    (e: unknown) => isSandboxAttestError(e) && e.code === "MalformedEvent",
  );
  assert.equal(j.size, 0);
  assert.equal(j.head().size, 0);
});
