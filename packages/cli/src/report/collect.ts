// What `sbx report` embeds (issue 19): the record's bytes and the raw bytes of every object it
// references that the store holds — attestations and receipts (signed/), snapshot trees, leaves,
// memory images, manifests (objects/) — exactly as stored, unchecked: the page checks them. Leaves
// and memory images past the embedding budget are left out and listed with their stated size.
import { existsSync, readFileSync, statSync } from "node:fs";
import { canonicalBytes, fromBase64, isDigest, parseCanonical, type Digest, type Json } from "@sbx/wire";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { readStoredJournal } from "@sbx/sandbox-attest/journal";
import type { TreeHeadJson } from "@sbx/sandbox-attest/merkle";
import { decodeRecord, parseFsDir, type Segment } from "@sbx/sandbox-attest/runrecord";
import type { FileStore } from "@sbx/host/store";
import { b64, REPORT_FORMAT, type FleetBundle, type RunBundle } from "./bundle.ts";

/**
 * Where the objects come from, as stored (nothing checked: the page checks): a file store
 * (fileObjects), or the PostgreSQL store read into memory (@sbx/host/pg PgObjectCache.rawObjects).
 */
export interface ObjectSource {
  /** The bytes stored at `address`, or null when absent. */
  object(address: Digest): Uint8Array | null;
  /** The size of the object at `address`, or null when absent. */
  size(address: Digest): bigint | null;
  /** The stored bytes of the signed object at `address`, or null when absent. */
  signed(address: Digest): Uint8Array | null;
}

/** fileObjects reads a file store's objects as stored. */
export function fileObjects(store: FileStore): ObjectSource {
  return {
    object: (a) => rawOf(store.objectPath(a)),
    size: (a) => {
      const p = store.objectPath(a);
      return existsSync(p) ? BigInt(statSync(p).size) : null;
    },
    signed: (a) => rawOf(store.signedPath(a)),
  };
}

/** What to embed beside the record. */
export interface CollectOptions {
  /** The store the record points into; null embeds the record alone (unless `objects` is given). */
  readonly store: FileStore | null;
  /** Where the objects come from instead of `store` (another kind of store). */
  readonly objects?: ObjectSource | undefined;
  /** Most bytes of file leaves and memory images embedded (directories and signed objects always are). */
  readonly embedMax: number;
  /** Journals' event lists (§8), as parsed from `--journal` files. */
  readonly journals: readonly Json[];
  /** Trusted host did:keys, embedded for the page's first verification. */
  readonly trust: readonly string[];
  /** The head the record must end at (`--head`). */
  readonly expectHead?: Digest | undefined;
}

interface Acc {
  readonly src: ObjectSource;
  readonly objects: Record<string, string>;
  readonly signed: Record<string, string>;
  readonly omitted: Record<string, string>;
  budget: number;
}

function rawOf(path: string): Uint8Array | null {
  return existsSync(path) ? new Uint8Array(readFileSync(path)) : null;
}

function addSigned(acc: Acc, address: Digest): Uint8Array | null {
  const bytes = acc.src.signed(address);
  if (bytes !== null) acc.signed[address] = b64(bytes);
  return bytes;
}

function addObject(acc: Acc, address: Digest, budgeted: boolean, size?: bigint): Uint8Array | null {
  if (acc.objects[address] !== undefined) return null;
  const stored = acc.src.size(address);
  if (stored === null) return null;
  if (budgeted) {
    const n = size ?? stored;
    if (n > BigInt(acc.budget)) {
      acc.omitted[address] = String(n);
      return null;
    }
    acc.budget -= Number(n);
  }
  const bytes = acc.src.object(address);
  if (bytes === null) return null;
  acc.objects[address] = b64(bytes);
  return bytes;
}

/** addTree embeds a snapshot's directories and, within the budget, its leaves (§13.8). */
function addTree(acc: Acc, root: Digest, depth = 0): void {
  const bytes = addObject(acc, root, false);
  if (bytes === null || depth > 1024) return;
  let entries;
  try {
    entries = parseFsDir(bytes).entries;
  } catch {
    return; // the page refuses it with the code
  }
  for (const e of entries)
    if (e.kind === "dir") addTree(acc, e.digest, depth + 1);
    else addObject(acc, e.digest, true, BigInt(e.size));
}

function addExecuted(acc: Acc, att: Digest): void {
  const bytes = addSigned(acc, att);
  if (bytes === null) {
    addObject(acc, att, false);
    return;
  }
  try {
    const p = verifyAttestation(parseCanonical(bytes)).predicate;
    if (addSigned(acc, p.energy.receipt) === null) addObject(acc, p.energy.receipt, false);
    addJournal(acc, { size: p.journal.events, root: p.journal.root });
  } catch {
    // an attestation the library refuses: embedded as stored, the page shows why
  }
}

/**
 * addJournal embeds the interval's journal as the store keeps it (§13.7.3: the nodes of its tree,
 * found from the head the attestation signs), every node read as stored; the page walks and checks
 * them. A journal the store did not keep embeds nothing.
 */
function addJournal(acc: Acc, head: TreeHeadJson): void {
  try {
    readStoredJournal(head, (a) => {
      const bytes = acc.src.object(a);
      if (bytes !== null) acc.objects[a] = b64(bytes);
      return bytes;
    });
  } catch {
    // a node that is wrong or missing: what was read is embedded, and the page refuses it
  }
}

function addSegment(acc: Acc, s: Segment): void {
  if (s.kind === "executed") {
    addExecuted(acc, s.attestation);
    return;
  }
  if (s.kind === "closed" || s.kind === "moved") return;
  addTree(acc, s.snapshot.fs_root);
  if (s.snapshot.memory !== undefined) addObject(acc, s.snapshot.memory, true);
  addObject(acc, s.snapshot.manifest, false);
}

/** addGrants embeds the grant-set document at `grants_id` and every grant on its members' chains (jcp §4.1). */
function addGrants(acc: Acc, grantsId: Digest): void {
  const doc = addObject(acc, grantsId, false);
  if (doc === null) return;
  let todo: unknown[] = [];
  try {
    todo = [...(parseCanonical(doc) as { grants: unknown[] }).grants];
  } catch {
    return; // the page refuses it with the code
  }
  for (let i = 0; i < todo.length && i < 4096; i++) {
    const a = todo[i];
    if (!isDigest(a) || acc.signed[a] !== undefined) continue;
    const bytes = addSigned(acc, a);
    if (bytes === null) continue;
    try {
      const env = parseCanonical(bytes) as { payload: string };
      const parent = (
        JSON.parse(new TextDecoder().decode(fromBase64(env.payload) ?? new Uint8Array())) as {
          parent?: unknown;
        }
      ).parent;
      if (isDigest(parent)) todo.push(parent);
    } catch {
      // a grant the library refuses: embedded as stored, the page shows why
    }
  }
}

/** collectRun gathers a run's bundle: the record bytes and, with a store, what they reference. */
export function collectRun(record: Uint8Array, name: string, o: CollectOptions): RunBundle {
  const src = o.objects ?? (o.store !== null ? fileObjects(o.store) : null);
  const acc: Acc | null = src ? { src, objects: {}, signed: {}, omitted: {}, budget: o.embedMax } : null;
  if (acc !== null) {
    let segments: readonly Segment[] = [];
    try {
      const r = decodeRecord(record).record;
      segments = r.segments;
      addGrants(acc, r.grantsId);
    } catch {
      // a record the library refuses is embedded alone; the page shows why
    }
    for (const s of segments) addSegment(acc, s);
  }
  return {
    format: REPORT_FORMAT,
    kind: "run",
    name,
    record: b64(record),
    objects: acc?.objects ?? {},
    signed: acc?.signed ?? {},
    omitted: acc?.omitted ?? {},
    journals: o.journals.map((j) => b64(canonicalBytes(j))),
    trust: [...o.trust],
    ...(o.expectHead !== undefined ? { expect_head: o.expectHead } : {}),
  };
}

/** collectFleet embeds a fleet file's bytes as read. */
export function collectFleet(bytes: Uint8Array, name: string, trust: readonly string[]): FleetBundle {
  return { format: REPORT_FORMAT, kind: "fleet", name, fleet: b64(bytes), trust: [...trust] };
}
