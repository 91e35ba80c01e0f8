// §13.9 Verification of a run from files alone: the record file (§13.5) verified from genesis, then
// every object it references that the store holds: each executed segment's attestation (§7.4, bound
// to the record's unit and grant set and, when it cites one, to the head it continued from), its
// energy receipt object, each snapshot's filesystem tree (§13.8), memory image and manifest object.
// Missing objects are listed, not guessed at; energy is reported active + idle, complete or not.
import { readFileSync, statSync } from "node:fs";
import { isWireError, isDigest, type Amount, type Digest } from "@sbx/wire";
import { verifyAttestation, verifyInterval } from "@sbx/sandbox-attest/attestation";
import {
  decodeRecord,
  isSandboxAttestError,
  runEnergy,
  SandboxAttestError,
  snapshotAddress,
  type RunEnergy,
  type RunRecord,
  type Segment,
  type SnapshotRef,
} from "@sbx/sandbox-attest/runrecord";
import { isHostError } from "../errors.ts";
import { verifyStoredTree } from "../snapshot/verify.ts";
import type { FileStore } from "./filestore.ts";
import { readSettled } from "./records.ts";

/** What to hold the record to beyond its own consistency. */
export interface VerifyFilesOptions {
  /** The head the record must end at (detects a record cut back at a line boundary). */
  readonly expectHead?: Digest;
  /**
   * The trust set: when given, every attestation must be by one of these host did:keys
   * (`HostMismatch`), and so must every signed energy receipt (§7.5: by the attestation's host).
   */
  readonly hosts?: readonly string[];
}

/** One segment as the report shows it. */
export interface SegmentReport {
  readonly n: number;
  readonly kind: Segment["kind"];
  readonly head: Digest;
  readonly detail: string;
}

/** The result of verifying a record from files. */
export interface FilesReport {
  readonly valid: boolean;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly unit_id: Digest | null;
  readonly grants_id: Digest | null;
  readonly head: Digest | null;
  readonly phase: string | null;
  readonly phases: Record<Segment["kind"], number>;
  readonly segments: readonly SegmentReport[];
  readonly energy: RunEnergy | null;
  readonly checked: { attestations: number; receipts: number; trees: number; objects: number };
  readonly missing: readonly string[];
  /** Every did:key whose valid signature was checked on an object the record references, sorted. */
  readonly signers: readonly string[];
}

interface Ctx {
  readonly store: FileStore | null;
  readonly record: RunRecord;
  readonly opts: VerifyFilesOptions;
  readonly active: Map<Digest, Amount>;
  readonly missing: string[];
  readonly checked: FilesReport["checked"];
  readonly manifests: Set<Digest>;
  readonly signers: Set<string>;
}

function checkObjectFile(ctx: Ctx, store: FileStore, address: Digest, what: string): void {
  if (store.getObjectSync(address) === null) ctx.missing.push(`${what} ${address}`);
  else ctx.checked.objects++;
}

function checkAttestation(ctx: Ctx, store: FileStore, att: Digest, n: number): void {
  const env = readSigned(store, att);
  if (env === null) return void ctx.missing.push(`attestation ${att}`);
  const expect = { unitId: ctx.record.unitId, grantsId: ctx.record.grantsId };
  const v = verifyAttestation(env, expect);
  if (v.address !== att)
    throw new SandboxAttestError("ObjectMismatch", `attestation stored as ${att} has address ${v.address}`);
  const p = v.predicate;
  if (p.run_head !== undefined && p.run_head !== ctx.record.heads[n - 1])
    throw new SandboxAttestError(
      "RunHeadMismatch",
      `segment ${n}: attestation continues ${p.run_head}, record head was ${ctx.record.heads[n - 1]}`,
    );
  if (ctx.opts.hosts !== undefined && !ctx.opts.hosts.includes(p.host))
    throw new SandboxAttestError("HostMismatch", `segment ${n}: attested by untrusted host ${p.host}`);
  for (const s of v.signers) ctx.signers.add(s);
  ctx.manifests.add(p.manifest);
  ctx.active.set(att, p.energy.total_uj);
  ctx.checked.attestations++;
  checkReceipt(ctx, store, env, expect, p.energy.receipt);
}

// A signed receipt is verified as §7.5 says: every signature, signed by the attestation's host (a
// host of the trust set, checked above), and bound to the attestation (address, unit, grant set,
// total, interval, provenance). A receipt kept as a plain object is bound by its address alone.
function checkReceipt(
  ctx: Ctx,
  store: FileStore,
  att: unknown,
  expect: { unitId: Digest; grantsId: Digest },
  receipt: Digest,
): void {
  const env = readSigned(store, receipt);
  if (env !== null) {
    const r = verifyInterval(att, { receipt: env }, expect);
    ctx.signers.add(r.receipt.receipt.host);
    ctx.checked.receipts++;
  } else if (store.getObjectSync(receipt) !== null) ctx.checked.receipts++;
  else ctx.missing.push(`receipt ${receipt}`);
}

function readSigned(store: FileStore, address: Digest): unknown {
  try {
    return store.getSignedSync(address);
  } catch (e) {
    const code = (e as { code?: string }).code ?? "InvalidJson";
    throw new SandboxAttestError("ObjectMismatch", `signed object ${address} is unreadable (${code})`, {
      cause: e,
    });
  }
}

function checkSnapshot(ctx: Ctx, store: FileStore, ref: SnapshotRef, seen: Set<Digest>): void {
  ctx.manifests.add(ref.manifest);
  if (seen.has(snapshotAddress(ref))) return;
  seen.add(snapshotAddress(ref));
  if (store.getObjectSync(ref.fs_root) === null) ctx.missing.push(`fs_root ${ref.fs_root}`);
  else {
    verifyStoredTree(store, ref.fs_root);
    ctx.checked.trees++;
  }
  if (ref.memory !== undefined) checkObjectFile(ctx, store, ref.memory, "memory image");
  checkObjectFile(ctx, store, ref.manifest, "manifest");
}

function detail(s: Segment): string {
  if (s.kind === "executed") return `attestation ${s.attestation}`;
  if (s.kind === "suspended")
    return `snapshot fs_root ${s.snapshot.fs_root}${s.snapshot.memory ? ` memory ${s.snapshot.memory}` : ""} manifest ${s.snapshot.manifest}`;
  if (s.kind === "resumed") return `idle ${s.idle_uj} µJ ${s.idle_provenance} (${s.idle_source})`;
  return `outcome ${s.outcome}`;
}

function checkObjects(ctx: Ctx): void {
  const store = ctx.store;
  if (store === null) return;
  const seen = new Set<Digest>();
  ctx.record.segments.forEach((s, i) => {
    if (s.kind === "executed") checkAttestation(ctx, store, s.attestation, i + 1);
    else if (s.kind !== "closed") checkSnapshot(ctx, store, s.snapshot, seen);
  });
  if (ctx.manifests.size > 1)
    throw new SandboxAttestError(
      "ManifestMismatch",
      `the run cites ${ctx.manifests.size} different manifests`,
    );
}

/**
 * settledView returns the record as its store's next writer will settle it, when `recordPath` is
 * that store's own file for the record and the file ends in a partly written line that is a prefix
 * of the append its claim committed (§13.7: a segment whose claim is published is committed): the
 * writer was interrupted mid-line, and the claim completes it. Read-only: nothing is written.
 * Anything else (unclaimed or foreign torn bytes, a file that simply ends at a line boundary,
 * anything unreadable) leaves the raw bytes to be judged as the file holds them, so a flipped or
 * cut-back record is still refused.
 */
function settledView(recordPath: string, store: FileStore | null, raw: Uint8Array): Uint8Array {
  if (store === null) return raw;
  try {
    const decoded = decodeRecord(raw, { allowTorn: true });
    if (decoded.tornBytes === 0) return raw;
    const id = decoded.record.genesis;
    const own = statSync(store.recordPath(id));
    const given = statSync(recordPath);
    if (own.ino !== given.ino || own.dev !== given.dev) return raw;
    const settled = readSettled(store.root, id);
    const extendsRaw =
      settled.bytes.length > raw.length && Buffer.compare(settled.bytes.subarray(0, raw.length), raw) === 0;
    return settled.report.rolledForward > 0 && settled.report.cutBytes === 0 && extendsRaw
      ? settled.bytes
      : raw;
  } catch {
    return raw;
  }
}

/**
 * verifyRecordFiles verifies the record at `recordPath` and, with a store, every object it references
 * (§13.9). Never throws for a bad record or object: the first failure is the report's `error` with its
 * spec code. Throws only when the record file cannot be read at all (the caller's "unusable input").
 * With a store holding the record, an append committed by its claim whose line the writer left
 * half written is verified as committed (the settled view), read-only.
 */
export function verifyRecordFiles(
  recordPath: string,
  store: FileStore | null,
  opts: VerifyFilesOptions = {},
): FilesReport {
  const bytes = settledView(recordPath, store, readFileSync(recordPath));
  const phases = { executed: 0, suspended: 0, resumed: 0, closed: 0 };
  const checked = { attestations: 0, receipts: 0, trees: 0, objects: 0 };
  const missing: string[] = [];
  const empty = {
    unit_id: null,
    grants_id: null,
    head: null,
    phase: null,
    phases,
    segments: [],
    energy: null,
    checked,
    missing,
    signers: [],
  };
  let record: RunRecord;
  try {
    record = decodeRecord(bytes).record;
    if (opts.expectHead !== undefined && record.head !== opts.expectHead)
      throw new SandboxAttestError(
        "HeadMismatch",
        `record ends at ${record.head}, expected ${opts.expectHead}`,
      );
  } catch (e) {
    return { valid: false, error: errorOf(e), ...empty };
  }
  for (const s of record.segments) phases[s.kind]++;
  const segments = record.segments.map((s, i) => ({
    n: i + 1,
    kind: s.kind,
    head: record.heads[i + 1]!,
    detail: detail(s),
  }));
  const signers = new Set<string>();
  const ctx: Ctx = {
    store,
    record,
    opts,
    active: new Map(),
    missing,
    checked,
    manifests: new Set(),
    signers,
  };
  const base = {
    unit_id: record.unitId,
    grants_id: record.grantsId,
    head: record.head,
    phase: record.phase,
    phases,
    segments,
    checked,
    missing,
  };
  try {
    checkObjects(ctx);
  } catch (e) {
    return { valid: false, error: errorOf(e), ...base, energy: null, signers: [...signers].sort() };
  }
  return {
    valid: true,
    error: null,
    ...base,
    signers: [...signers].sort(),
    energy: runEnergy(record.segments, (a) => ctx.active.get(a) ?? null),
  };
}

// A refusal is told by its class, never by the look of a code: a coded error of the wire layer or of
// sandbox-attest or the host is the report's verdict; anything else (an unreadable file) is the caller's.
function errorOf(e: unknown): { code: string; message: string } {
  if (!isWireError(e) && !isSandboxAttestError(e) && !isHostError(e)) throw e;
  return { code: e.code, message: e.message };
}

/** isHeadArg reports whether a command-line head is a digest. */
export function isHeadArg(s: string | undefined): s is Digest {
  return isDigest(s);
}
