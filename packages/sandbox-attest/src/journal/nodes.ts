// §13.7.3 A journal kept in a store as the nodes of its own tree. Every node of the §8.1 tree is
// content-addressed already: leaf i hashes to BLAKE3(0x00 ‖ JCS(eventᵢ)) and an interior node to
// BLAKE3(0x01 ‖ left ‖ right), so the preimage of each hash is an object whose address is that hash.
// Stored so, the journal of an interval is found from the tree head its attestation signs — no new
// wire form, no index — and a reader that walks down from the root checks every byte it reads.
import {
  canonicalBytes,
  digestBytes,
  formatDigest,
  parseCanonical,
  parseDigest,
  type Digest,
  type Json,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { type TreeHeadJson } from "../merkle/index.ts";
import { type JournalEvent } from "./events.ts";
import { Journal } from "./journal.ts";

/** Most events a stored journal may have for a reader to walk it (2 × this many objects at most). */
export const MAX_STORED_JOURNAL_EVENTS = 1 << 22;

/** One node of a journal's tree as stored: its address (the node's hash) and its preimage. */
export interface JournalNode {
  readonly address: Digest;
  readonly bytes: Uint8Array;
}

/** split is RFC 9162's k: the largest power of two below n (n ≥ 2). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * journalNodes returns the nodes of the tree of `events` (§8.1, §8.3), leaves and interior nodes, the
 * root last; the empty journal has none (its root is BLAKE3("") and holds nothing).
 */
export function journalNodes(events: readonly JournalEvent[]): JournalNode[] {
  const out: JournalNode[] = [];
  const build = (lo: number, hi: number): Uint8Array => {
    let bytes: Uint8Array;
    if (hi - lo === 1) {
      const leaf = canonicalBytes(events[lo]);
      bytes = new Uint8Array(1 + leaf.length);
      bytes[0] = 0x00;
      bytes.set(leaf, 1);
    } else {
      const k = split(hi - lo);
      const left = build(lo, lo + k);
      const right = build(lo + k, hi);
      bytes = new Uint8Array(65);
      bytes[0] = 0x01;
      bytes.set(left, 1);
      bytes.set(right, 33);
    }
    const address = digestBytes(bytes);
    out.push({ address, bytes });
    return parseDigest(address);
  };
  if (events.length > 0) build(0, events.length);
  return out;
}

/**
 * readStoredJournal walks a journal's tree down from the root of `head` through `get` (an object by
 * its address, or null when the store lacks it) and returns its events, checked as §8.2–§8.3 check
 * a journal. Returns null when the root itself is absent (the journal was not kept); every other
 * failure is a refusal with its code: a node whose bytes do not hash to its address
 * (`ObjectMismatch`), a node below the root that is absent (`ObjectMissing`), a node not of the
 * shape the head's size gives it (`JournalRootMismatch`), an event §8.2 refuses (its own code). An
 * empty journal's events ([]) need no object.
 */
export function readStoredJournal(
  head: TreeHeadJson,
  get: (address: Digest) => Uint8Array | null,
): JournalEvent[] | null {
  const size = head.size;
  if (!Number.isSafeInteger(size) || size < 0 || size > MAX_STORED_JOURNAL_EVENTS)
    throw new SandboxAttestError("JournalRootMismatch", `a stored journal of ${size} events is not read`);
  if (size === 0) {
    if (head.root !== digestBytes(new Uint8Array()))
      throw new SandboxAttestError("JournalRootMismatch", 'an empty journal\'s root is BLAKE3("")');
    return [];
  }
  const events: Json[] = [];
  const node = (address: Digest, root: boolean): Uint8Array | null => {
    const bytes = get(address);
    if (bytes === null) {
      if (root) return null;
      throw new SandboxAttestError("ObjectMissing", `journal node ${address} is not in the store`);
    }
    const got = digestBytes(bytes);
    if (got !== address)
      throw new SandboxAttestError("ObjectMismatch", `journal node ${address} holds bytes hashing to ${got}`);
    return bytes;
  };
  const walk = (address: Digest, lo: number, hi: number, root: boolean): boolean => {
    const bytes = node(address, root);
    if (bytes === null) return false;
    if (hi - lo === 1) {
      if (bytes[0] !== 0x00)
        throw new SandboxAttestError(
          "JournalRootMismatch",
          `journal node ${address} is not the leaf of event ${lo}`,
        );
      events.push(parseCanonical(bytes.subarray(1)));
      return true;
    }
    if (bytes.length !== 65 || bytes[0] !== 0x01)
      throw new SandboxAttestError(
        "JournalRootMismatch",
        `journal node ${address} is not the interior node of events ${lo}–${hi - 1}`,
      );
    const k = split(hi - lo);
    walk(formatDigest(bytes.slice(1, 33)), lo, lo + k, false);
    walk(formatDigest(bytes.slice(33, 65)), lo + k, hi, false);
    return true;
  };
  if (!walk(head.root, 0, size, true)) return null;
  // The walk proves the root; §8.3 item 1 (seq and chunk order) is checked as any journal's is.
  const j = Journal.from(events);
  const h = j.head();
  if (h.root !== head.root || h.size !== size)
    throw new SandboxAttestError("JournalRootMismatch", `stored journal has head ${h.size}/${h.root}`);
  return [...j.events];
}
