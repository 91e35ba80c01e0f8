// §13.7.3 journals kept as the nodes of their tree: the nodes journalNodes makes are exactly the
// preimages of an independent restatement of the §8.1 tree (plain recursion, @noble/hashes BLAKE3,
// not the library's Merkle code), readStoredJournal gives the events back from the signed head
// alone, and every change to what the store holds is refused with its code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { blake3 } from "@noble/hashes/blake3.js";
import { canonicalBytes, toHex, type Digest } from "@sbx/wire";
import { Journal, journalNodes, readStoredJournal, type JournalEvent } from "@sbx/sandbox-attest/journal";
import { isSandboxAttestError } from "@sbx/sandbox-attest/runrecord";

const hex = (b: Uint8Array): Digest => `blake3:${toHex(b)}`;
const cat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** The §8.1 tree restated: every node's preimage, keyed by its hash; returns the root hash. */
function restate(events: readonly JournalEvent[], out: Map<Digest, Uint8Array>): Uint8Array {
  if (events.length === 1) {
    const pre = cat(new Uint8Array([0]), canonicalBytes(events[0]));
    out.set(hex(blake3(pre)), pre);
    return blake3(pre);
  }
  let k = 1;
  while (k * 2 < events.length) k *= 2;
  const pre = cat(new Uint8Array([1]), restate(events.slice(0, k), out), restate(events.slice(k), out));
  out.set(hex(blake3(pre)), pre);
  return blake3(pre);
}

function journalOf(n: number): Journal {
  const j = new Journal();
  j.append({
    type: "process.start",
    pid: 7,
    argv: ["sh", "-c", "work"],
    binary: `blake3:${"ab".repeat(32)}`,
  });
  for (let i = 1; i < n - 1; i++)
    j.append({
      type: "file.write",
      path: `out/${i}.txt`,
      digest: `blake3:${"cd".repeat(32)}`,
      size: String(i),
    });
  if (n > 1) j.append({ type: "process.exit", pid: 7, code: 0, signal: null });
  return j;
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(isSandboxAttestError(e), String(e));
    return e.code;
  }
  return "ok";
}

test("the stored nodes are the §8.1 tree's preimages, and the signed head alone gives the events back", () => {
  for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33]) {
    const j = journalOf(n);
    const want = new Map<Digest, Uint8Array>();
    const root = hex(restate(j.events, want));
    const head = j.head();
    assert.equal(head.root, root, `n=${n}: the journal's root is the restated one`);
    const nodes = journalNodes(j.events);
    assert.equal(nodes.length, 2 * n - 1, `n=${n}`);
    assert.equal(nodes.at(-1)!.address, root, `n=${n}: root last`);
    assert.deepEqual(new Map(nodes.map((x) => [x.address, x.bytes])), want, `n=${n}`);
    const events = readStoredJournal(head, (a) => want.get(a) ?? null);
    assert.deepEqual(events, j.events, `n=${n}`);
  }
  // The empty journal holds nothing and needs nothing.
  const empty = new Journal();
  assert.deepEqual(journalNodes(empty.events), []);
  assert.deepEqual(
    readStoredJournal(empty.head(), () => assert.fail("nothing to read")),
    [],
  );
});

test("what the store holds is checked: absent root, changed, missing or misplaced node, wrong size", () => {
  const j = journalOf(6);
  const head = j.head();
  const store = new Map(journalNodes(j.events).map((x) => [x.address, x.bytes]));
  const get = (m: Map<Digest, Uint8Array>) => (a: Digest) => m.get(a) ?? null;
  // Not kept: the root is absent.
  assert.equal(
    readStoredJournal(head, () => null),
    null,
  );
  // Every single byte changed in every node: the node's address no longer matches.
  for (const [a, bytes] of store)
    for (let i = 0; i < bytes.length; i += Math.max(1, Math.floor(bytes.length / 7))) {
      const changed = bytes.slice();
      changed[i] = changed[i]! ^ 0x01;
      const m = new Map(store).set(a, changed);
      assert.equal(
        codeOf(() => readStoredJournal(head, get(m))),
        "ObjectMismatch",
        `${a} byte ${i}`,
      );
    }
  // A node below the root missing.
  for (const a of store.keys())
    if (a !== head.root) {
      const m = new Map(store);
      m.delete(a);
      assert.equal(
        codeOf(() => readStoredJournal(head, get(m))),
        "ObjectMissing",
      );
    }
  // The head's size does not give the tree its shape: a leaf read where a node is expected, or
  // the other way round.
  assert.equal(
    codeOf(() => readStoredJournal({ size: 5, root: head.root }, get(store))),
    "JournalRootMismatch",
  );
  assert.equal(
    codeOf(() => readStoredJournal({ size: 12, root: head.root }, get(store))),
    "JournalRootMismatch",
  );
  assert.equal(
    codeOf(() => readStoredJournal({ size: 1, root: head.root }, get(store))),
    "JournalRootMismatch",
  );
  assert.equal(
    codeOf(() => readStoredJournal({ size: 0, root: head.root }, get(store))),
    "JournalRootMismatch",
  );
  assert.equal(
    codeOf(() => readStoredJournal({ size: 2 ** 40, root: head.root }, get(store))),
    "JournalRootMismatch",
  );
  // A tree of well-formed nodes whose events are out of order (a host that stored another tree):
  // every node matches its address, and §8.3 still refuses it.
  const a = journalOf(3).events;
  const swapped = [a[1]!, a[0]!, a[2]!];
  const m = new Map(journalNodes(swapped).map((x) => [x.address, x.bytes]));
  const root = journalNodes(swapped).at(-1)!.address;
  assert.equal(
    codeOf(() => readStoredJournal({ size: 3, root }, get(m))),
    "EventOutOfOrder",
  );
});
