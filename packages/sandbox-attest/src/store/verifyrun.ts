// §13.9 Verification of a run: its record's wire form verified from genesis (§13.4, §13.5), then
// every object it references that the caller can supply: each executed segment's attestation (§7.4,
// bound to the record's unit and grant set and, when it cites one, to the head it continued from),
// its energy receipt (§7.5), each snapshot's filesystem tree (§13.8), memory image and manifest.
// Missing objects are listed, not guessed at; energy is active + idle, complete or not (§13.6).
// Last, every journal the caller holds (§13.7.3 item 3) is walked from the root its attestation
// signs and checked node by node, so a changed journal is refused by every verifier of the run.
// Pure: the caller supplies the bytes and the objects (a directory, a database, an archive).
import { digestBytes, isCodedError, isWireError, type Amount, type Digest } from "@sbx/wire";
import { verifyAttestation, type VerifiedAttestation } from "../attestation/verify.ts";
import { verifyInterval } from "../attestation/interval.ts";
import { isSandboxAttestError, SandboxAttestError } from "../errors.ts";
import { readStoredJournal } from "../journal/nodes.ts";
import { runEnergy, type RunEnergy } from "../runrecord/energy.ts";
import { walkFsTree } from "../runrecord/fstree.ts";
import type { RunRecord } from "../runrecord/record.ts";
import { snapshotAddress, type MovedSegment, type Segment, type SnapshotRef } from "../runrecord/segment.ts";
import { decodeRecord } from "../runrecord/wire.ts";

/** What verifyRun reads objects through; synchronous, so a verifier holds no locks across awaits. */
export interface RunObjects {
  /** The bytes stored at `address`, checked against it (`ObjectMismatch`), or null when absent. */
  getObject(address: Digest): Uint8Array | null;
  /** The envelope stored under `address`, parsed (not verified), or null when absent. */
  getSigned(address: Digest): unknown;
  /**
   * Optional: checks one leaf of a snapshot tree (file content or link target) of `size` bytes
   * without loading it whole (`ObjectMissing`, `ObjectMismatch`); the default reads it with getObject.
   */
  checkLeaf?(address: Digest, size: bigint, path: string): void;
}

/** What to hold the run to beyond its own consistency. */
export interface VerifyRunOptions {
  /** The head the record must end at (detects a record cut back at a line boundary). */
  readonly expectHead?: Digest;
  /** The id (head₀) the record must have (`GenesisMismatch`). */
  readonly expectId?: Digest;
  /** Trusted host did:keys: every attestation and signed receipt must be by one (`HostMismatch`). */
  readonly hosts?: readonly string[];
}

/** What was checked, by kind. */
export interface RunChecked {
  attestations: number;
  receipts: number;
  trees: number;
  objects: number;
  /** Journals walked and checked (§13.7.3), and the events they hold. */
  journals: number;
  events: number;
}

/** The result of verifying a run. Never thrown for a bad record or object: `error` holds the first. */
export interface RunVerification {
  readonly valid: boolean;
  /** The first refusal: its code, and its message without the code (the reason). */
  readonly error: { readonly code: string; readonly message: string } | null;
  /** The decoded record, or null when the record itself did not verify. */
  readonly record: RunRecord | null;
  /** Every attestation opened and verified, by address, in segment order. */
  readonly attestations: ReadonlyMap<Digest, VerifiedAttestation>;
  /** Energy (§13.6), null unless valid. */
  readonly energy: RunEnergy | null;
  readonly checked: RunChecked;
  /** Referenced objects the caller could not supply, as "kind address". */
  readonly missing: readonly string[];
  /** Every did:key whose valid signature was checked on a referenced object, sorted. */
  readonly signers: readonly string[];
  /** Every object address the run references and the caller holds (attestations and receipts as signed objects). */
  readonly objects: { readonly plain: readonly Digest[]; readonly signed: readonly Digest[] };
}

interface Ctx {
  readonly objects: RunObjects | null;
  readonly record: RunRecord;
  readonly opts: VerifyRunOptions;
  readonly atts: Map<Digest, VerifiedAttestation>;
  readonly missing: string[];
  readonly checked: RunChecked;
  readonly manifests: Set<Digest>;
  readonly signers: Set<string>;
  readonly plain: Set<Digest>;
  readonly signed: Set<Digest>;
}

function plainObject(ctx: Ctx, o: RunObjects, address: Digest, what: string): void {
  if (o.getObject(address) === null) ctx.missing.push(`${what} ${address}`);
  else {
    ctx.checked.objects++;
    ctx.plain.add(address);
  }
}

function readSigned(o: RunObjects, address: Digest): unknown {
  try {
    return o.getSigned(address);
  } catch (e) {
    const code = (e as { code?: string }).code ?? "InvalidJson";
    throw new SandboxAttestError("ObjectMismatch", `signed object ${address} is unreadable (${code})`, {
      cause: e,
    });
  }
}

function checkAttestation(ctx: Ctx, o: RunObjects, att: Digest, n: number): void {
  const env = readSigned(o, att);
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
  ctx.atts.set(att, v);
  ctx.signed.add(att);
  ctx.checked.attestations++;
  checkReceipt(ctx, o, env, expect, p.energy.receipt);
}

// A signed receipt is verified as §7.5 says: every signature, signed by the attestation's host (a
// host of the trust set, checked above), and bound to the attestation (address, unit, grant set,
// total, interval, provenance). A receipt kept as a plain object is bound by its address alone.
function checkReceipt(
  ctx: Ctx,
  o: RunObjects,
  att: unknown,
  expect: { unitId: Digest; grantsId: Digest },
  receipt: Digest,
): void {
  const env = readSigned(o, receipt);
  if (env !== null) {
    const r = verifyInterval(att, { receipt: env }, expect);
    ctx.signers.add(r.receipt.receipt.host);
    ctx.signed.add(receipt);
    ctx.checked.receipts++;
  } else if (o.getObject(receipt) !== null) {
    ctx.plain.add(receipt);
    ctx.checked.receipts++;
  } else ctx.missing.push(`receipt ${receipt}`);
}

function checkTree(ctx: Ctx, o: RunObjects, root: Digest): void {
  walkFsTree(root, {
    getDir: (a) => {
      const b = o.getObject(a);
      if (b !== null) ctx.plain.add(a);
      return b;
    },
    checkLeaf: (a, size, _kind, path) => {
      ctx.plain.add(a);
      if (o.checkLeaf !== undefined) {
        o.checkLeaf(a, size, path);
        return;
      }
      const b = o.getObject(a);
      if (b === null) throw new SandboxAttestError("ObjectMissing", `object ${a} (${path}) is not held`);
      if (BigInt(b.length) !== size || digestBytes(b) !== a)
        throw new SandboxAttestError(
          "ObjectMismatch",
          `object ${a} (${path}) does not match its address or size`,
        );
    },
  });
  ctx.checked.trees++;
}

function checkSnapshot(ctx: Ctx, o: RunObjects, ref: SnapshotRef, seen: Set<Digest>): void {
  ctx.manifests.add(ref.manifest);
  if (seen.has(snapshotAddress(ref))) return;
  seen.add(snapshotAddress(ref));
  if (o.getObject(ref.fs_root) === null) ctx.missing.push(`fs_root ${ref.fs_root}`);
  else checkTree(ctx, o, ref.fs_root);
  if (ref.memory !== undefined) plainObject(ctx, o, ref.memory, "memory image");
  plainObject(ctx, o, ref.manifest, "manifest");
}

// §13.2a: the hand-off's signature verified with the record; its signer must be a trusted host.
function checkHandoffSigner(ctx: Ctx, s: MovedSegment, n: number): void {
  if (ctx.opts.hosts !== undefined && !ctx.opts.hosts.includes(s.signer))
    throw new SandboxAttestError(
      "HostMismatch",
      `segment ${n}: hand-off signed by untrusted host ${s.signer}`,
    );
  ctx.signers.add(s.signer);
}

function checkObjects(ctx: Ctx): void {
  const o = ctx.objects;
  if (o === null) return;
  const seen = new Set<Digest>();
  ctx.record.segments.forEach((s: Segment, i) => {
    if (s.kind === "executed") checkAttestation(ctx, o, s.attestation, i + 1);
    else if (s.kind === "moved") checkHandoffSigner(ctx, s, i + 1);
    else if (s.kind !== "closed") checkSnapshot(ctx, o, s.snapshot, seen);
  });
  if (ctx.manifests.size > 1)
    throw new SandboxAttestError(
      "ManifestMismatch",
      `the run cites ${ctx.manifests.size} different manifests`,
    );
  checkJournals(ctx, o);
}

/**
 * checkJournals walks, in segment order, the journal of every executed segment whose attestation
 * verified (§13.7.3 item 3: `ObjectMismatch`, `ObjectMissing`, `JournalRootMismatch`, the §8.2 and
 * §8.3 codes). A journal whose root is absent was not kept; but where the caller holds the root of
 * some interval's non-empty journal, it keeps them all (item 2), so the root of another absent is a
 * journal taken away: `ObjectMissing` (item 6). Run after every other check, so a run refused for
 * something else keeps that code.
 */
function checkJournals(ctx: Ctx, o: RunObjects): void {
  const absent: string[] = [];
  let kept = 0;
  ctx.record.segments.forEach((s, i) => {
    if (s.kind !== "executed") return;
    const att = ctx.atts.get(s.attestation);
    if (att === undefined) return; // missing, listed already
    const j = att.predicate.journal;
    const events = readStoredJournal({ size: j.events, root: j.root }, (a) => o.getObject(a));
    if (events === null) {
      absent.push(`segment ${i + 1}: journal root ${j.root}`);
      return;
    }
    if (events.length > 0) kept++;
    ctx.checked.journals++;
    ctx.checked.events += events.length;
  });
  if (kept > 0 && absent.length > 0)
    throw new SandboxAttestError(
      "ObjectMissing",
      `the store keeps this run's journals but not that of ${absent.join(", ")}`,
    );
}

// A refusal is told by its class: a coded error of the wire layer or of sandbox-attest is the verdict;
// `isVerdict` (the caller's) may admit its own layer's coded errors; anything else is rethrown.
function errorOf(e: unknown, isVerdict?: (e: unknown) => boolean): { code: string; message: string } {
  if ((isWireError(e) || isSandboxAttestError(e) || isVerdict?.(e) === true) && isCodedError(e))
    return { code: e.code, message: e.reason };
  throw e;
}

function decodeChecked(bytes: Uint8Array, opts: VerifyRunOptions): RunRecord {
  return decodeRecord(bytes, {
    ...(opts.expectId !== undefined ? { expectGenesis: opts.expectId } : {}),
    ...(opts.expectHead !== undefined ? { expectHead: opts.expectHead } : {}),
  }).record;
}

/**
 * verifyRun verifies a run (§13.9): the record `bytes` from genesis (§13.4, §13.5: `BadRecord`,
 * `TornRecord`, `GenesisMismatch`, `HeadMismatch` and the §13.3 codes), then, in segment order, every
 * object `objects` holds: attestations (§7.4 codes, `ObjectMismatch`, `RunHeadMismatch`,
 * `HostMismatch`), a hand-off's signer (§13.2a, `HostMismatch`), signed receipts (§7.5), snapshot trees (§13.8: `ObjectMissing`, `ObjectMismatch`,
 * `BadFsTree`), memory images and manifests, one manifest for the whole run (`ManifestMismatch`),
 * then every journal held (§13.7.3: `ObjectMismatch`, `ObjectMissing`, `JournalRootMismatch`, §8).
 * With `objects` null only the record is checked. Never throws for a refusal: the first one is the
 * result's `error`; `isVerdict` lets an I/O layer count its own coded errors as refusals too.
 */
export function verifyRun(
  bytes: Uint8Array,
  objects: RunObjects | null,
  opts: VerifyRunOptions = {},
  isVerdict?: (e: unknown) => boolean,
): RunVerification {
  const checked: RunChecked = {
    attestations: 0,
    receipts: 0,
    trees: 0,
    objects: 0,
    journals: 0,
    events: 0,
  };
  const none = { plain: [], signed: [] };
  let record: RunRecord;
  try {
    record = decodeChecked(bytes, opts);
  } catch (e) {
    const error = errorOf(e, isVerdict);
    return {
      valid: false,
      error,
      record: null,
      attestations: new Map(),
      energy: null,
      checked,
      missing: [],
      signers: [],
      objects: none,
    };
  }
  const ctx: Ctx = {
    objects,
    record,
    opts,
    atts: new Map(),
    missing: [],
    checked,
    manifests: new Set(),
    signers: new Set(),
    plain: new Set(),
    signed: new Set(),
  };
  let error: { code: string; message: string } | null = null;
  try {
    checkObjects(ctx);
  } catch (e) {
    error = errorOf(e, isVerdict);
  }
  const active = (a: Digest): Amount | null => ctx.atts.get(a)?.predicate.energy.total_uj ?? null;
  return {
    valid: error === null,
    error,
    record,
    attestations: ctx.atts,
    energy: error === null ? runEnergy(record.segments, active) : null,
    checked,
    missing: ctx.missing,
    signers: [...ctx.signers].sort(),
    objects: { plain: [...ctx.plain].sort(), signed: [...ctx.signed].sort() },
  };
}
