// The page's own verification of a run (issue 19; sandbox-attest §13.9): the checks `sbx verify`
// makes from files (host/store/verifyfiles.ts), made on the bytes the report embeds, with the same
// library functions: decodeRecord, verifyAttestation, verifyInterval, walkFsTree, checkObject,
// runEnergy. It never stops at the first failure: every object gets its own verdict, and the run's
// verdict is the first failure in the order `sbx verify` checks, so both name the same code.
import { isWireError, parseCanonical, type Digest, type Json } from "@sbx/wire";
import { verifyAttestation, verifyInterval, type ExecutionPredicate } from "@sbx/sandbox-attest/attestation";
import type { EnergyComponent } from "@sbx/sandbox-attest/energy";
import { Journal, readStoredJournal, type JournalEvent } from "@sbx/sandbox-attest/journal";
import {
  decodeRecord,
  isSandboxAttestError,
  runEnergy,
  SandboxAttestError,
  snapshotAddress,
  walkFsTree,
  type RunEnergy,
  type RunRecord,
  type SnapshotRef,
} from "@sbx/sandbox-attest/runrecord";
import { checkObject } from "@sbx/sandbox-attest/store";
import { unb64, type RunBundle } from "./bundle.ts";
import { statedInterval, type StatedInterval } from "./stated.ts";

/** What an object is to the run. */
export type ObjectKind =
  "record" | "attestation" | "receipt" | "journal" | "directory" | "file" | "symlink" | "memory" | "manifest";

/** One object's verdict: valid, invalid (with the code), omitted by the writer, or missing. */
export interface ObjectCheck {
  readonly address: string;
  readonly kind: ObjectKind;
  /** The segment (1-based) that first cites the object; 0 for the record itself. */
  readonly segment: number;
  /** For tree objects: the path inside the snapshot. */
  readonly path: string;
  readonly state: "valid" | "invalid" | "omitted" | "missing";
  readonly code: string | null;
  readonly message: string | null;
  readonly bytes: number | null;
}

/** One executed interval as verified: the predicate, the receipt's components, the journal. */
export interface IntervalView {
  readonly n: number;
  readonly predicate: ExecutionPredicate | null;
  /** The interval the attestation states: the verified one, or read unverified (stated.ts). */
  readonly stated: StatedInterval | null;
  readonly components: readonly EnergyComponent[] | null;
  readonly events: readonly JournalEvent[] | null;
}

/** The page's verdict on a run. */
export interface RunCheck {
  readonly valid: boolean;
  /** Valid and checked against a non-empty trust set (VALID); valid without one is UNTRUSTED. */
  readonly trusted: boolean;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly record: RunRecord | null;
  readonly objects: readonly ObjectCheck[];
  readonly intervals: ReadonlyMap<number, IntervalView>;
  readonly energy: RunEnergy | null;
  readonly signers: readonly string[];
}

interface Ctx {
  readonly b: RunBundle;
  readonly record: RunRecord;
  readonly hosts: readonly string[] | undefined;
  readonly objects: ObjectCheck[];
  readonly intervals: Map<number, IntervalView>;
  readonly active: Map<Digest, string>;
  readonly signers: Set<string>;
  readonly manifests: Set<Digest>;
  readonly journals: { events: readonly JournalEvent[]; root: string; size: number; used: boolean }[];
  first: { code: string; message: string } | null;
  /** The first refusal of a stored journal (§13.7.3), reported after every other. */
  late: { code: string; message: string } | null;
  /** Stored journals of at least one event walked, and intervals whose journal root is absent. */
  kept: number;
  readonly absent: { address: Digest; segment: number }[];
}

/** codeOf reads a refusal of the project's libraries; anything else is a defect and is rethrown. */
function codeOf(e: unknown): { code: string; message: string } {
  if (!isWireError(e) && !isSandboxAttestError(e)) throw e;
  return { code: e.code, message: e.reason };
}

function note(ctx: Ctx, o: Omit<ObjectCheck, "path"> & { path?: string }): void {
  ctx.objects.push({ ...o, path: o.path ?? "" });
  if (o.state === "invalid" && ctx.first === null && o.code !== null)
    ctx.first = { code: o.code, message: o.message ?? "" };
}

/** attempt runs one check; a refusal becomes the object's invalid verdict and null is returned. */
function attempt<T>(
  ctx: Ctx,
  o: { address: string; kind: ObjectKind; segment: number; bytes: number | null; path?: string },
  fn: () => T,
): T | null {
  try {
    const v = fn();
    note(ctx, { ...o, state: "valid", code: null, message: null });
    return v;
  } catch (e) {
    const c = codeOf(e);
    note(ctx, { ...o, state: "invalid", code: c.code, message: c.message });
    return null;
  }
}

/** signedOf parses a stored envelope as the file store does (canonical JSON), or null when absent. */
function signedOf(ctx: Ctx, address: Digest): { env: unknown; bytes: number } | null {
  const bytes = unb64(ctx.b.signed[address]);
  if (bytes === null) return null;
  try {
    return { env: parseCanonical(bytes), bytes: bytes.length };
  } catch (e) {
    const code = codeOf(e).code;
    throw new SandboxAttestError("ObjectMismatch", `signed object ${address} is unreadable (${code})`);
  }
}

/** objectOf returns an embedded plain object checked against its address, or null when absent. */
function objectOf(ctx: Ctx, address: Digest): Uint8Array | null {
  const bytes = unb64(ctx.b.objects[address]);
  return bytes === null ? null : checkObject(address, bytes);
}

function absent(ctx: Ctx, address: string, kind: ObjectKind, segment: number, path = ""): void {
  const size = ctx.b.omitted[address];
  note(ctx, {
    address,
    kind,
    segment,
    path,
    state: size !== undefined ? "omitted" : "missing",
    code: null,
    message: size !== undefined ? `${size} bytes, not embedded by the writer` : "not in the store",
    bytes: size !== undefined ? Number(size) : null,
  });
}

function checkAttestation(ctx: Ctx, att: Digest, n: number): void {
  const meta = { address: att, kind: "attestation" as const, segment: n };
  let got: { env: unknown; bytes: number } | null;
  try {
    got = signedOf(ctx, att);
  } catch (e) {
    const c = codeOf(e);
    note(ctx, { ...meta, state: "invalid", code: c.code, message: c.message, bytes: null });
    return;
  }
  if (got === null) {
    absent(ctx, att, "attestation", n);
    return;
  }
  const { env } = got;
  const expect = { unitId: ctx.record.unitId, grantsId: ctx.record.grantsId };
  const v = attempt(ctx, { ...meta, bytes: got.bytes }, () => {
    const a = verifyAttestation(env, expect);
    const p = a.predicate;
    if (a.address !== att)
      throw new SandboxAttestError("ObjectMismatch", `attestation stored as ${att} has address ${a.address}`);
    if (p.run_head !== undefined && p.run_head !== ctx.record.heads[n - 1])
      throw new SandboxAttestError(
        "RunHeadMismatch",
        `segment ${n}: attestation continues ${p.run_head}, record head was ${ctx.record.heads[n - 1]}`,
      );
    if (ctx.hosts !== undefined && !ctx.hosts.includes(p.host))
      throw new SandboxAttestError("HostMismatch", `segment ${n}: attested by untrusted host ${p.host}`);
    return a;
  });
  if (v === null) {
    const stated = statedInterval(env);
    return void ctx.intervals.set(n, { n, predicate: null, stated, components: null, events: null });
  }
  const p = v.predicate;
  for (const s of v.signers) ctx.signers.add(s);
  ctx.manifests.add(p.manifest);
  ctx.active.set(att, p.energy.total_uj);
  const components = checkReceipt(ctx, env, expect, p.energy.receipt, n);
  const stated = p.interval;
  ctx.intervals.set(n, { n, predicate: p, stated, components, events: journalOf(ctx, p, n) });
}

// §7.5 as verifyfiles.ts: a signed receipt is verified against the attestation that binds it; one
// kept as a plain object is bound by its address alone.
function checkReceipt(
  ctx: Ctx,
  att: unknown,
  expect: { unitId: Digest; grantsId: Digest },
  receipt: Digest,
  n: number,
): readonly EnergyComponent[] | null {
  const meta = { address: receipt, kind: "receipt" as const, segment: n };
  if (ctx.b.signed[receipt] !== undefined) {
    const r = attempt(ctx, { ...meta, bytes: unb64(ctx.b.signed[receipt])?.length ?? null }, () => {
      const got = signedOf(ctx, receipt);
      return verifyInterval(att, { receipt: got?.env }, expect);
    });
    if (r === null) return null;
    ctx.signers.add(r.receipt.receipt.host);
    return r.receipt.receipt.components;
  }
  if (ctx.b.objects[receipt] !== undefined)
    attempt(ctx, { ...meta, bytes: null }, () => objectOf(ctx, receipt));
  else absent(ctx, receipt, "receipt", n);
  return null;
}

/**
 * journalOf finds the journal whose tree head the predicate binds (§8): one given with `--journal`
 * whose recomputed head is that one, else the one the store kept as the nodes of its tree
 * (§13.7.3), walked down from the signed root with every node checked against its address.
 */
function journalOf(ctx: Ctx, p: ExecutionPredicate, n: number): readonly JournalEvent[] | null {
  const j = ctx.journals.find((x) => x.root === p.journal.root && x.size === p.journal.events);
  if (j !== undefined) {
    j.used = true;
    return j.events;
  }
  return storedJournal(ctx, p, n);
}

// A stored journal is checked after everything `sbx verify` checks (which does not read journals),
// so a run both refuse is refused by the page with sbx verify's code; a bad journal alone is refused
// with its own code.
function storedJournal(ctx: Ctx, p: ExecutionPredicate, n: number): readonly JournalEvent[] | null {
  let bytes = 0;
  const meta = { address: p.journal.root, kind: "journal" as const, segment: n, path: "" };
  try {
    const events = readStoredJournal({ size: p.journal.events, root: p.journal.root }, (a) => {
      const b = unb64(ctx.b.objects[a]);
      bytes += b?.length ?? 0;
      return b;
    });
    if (events === null) {
      ctx.absent.push({ address: p.journal.root, segment: n });
      return null;
    }
    if (events.length > 0) ctx.kept++;
    ctx.objects.push({ ...meta, state: "valid", code: null, message: null, bytes });
    return events;
  } catch (e) {
    const c = codeOf(e);
    ctx.objects.push({ ...meta, state: "invalid", ...c, bytes });
    ctx.late ??= c;
    return null;
  }
}

function checkSnapshot(ctx: Ctx, ref: SnapshotRef, n: number, seen: Set<Digest>): void {
  ctx.manifests.add(ref.manifest);
  if (seen.has(snapshotAddress(ref))) return;
  seen.add(snapshotAddress(ref));
  if (ctx.b.objects[ref.fs_root] === undefined) absent(ctx, ref.fs_root, "directory", n, "/");
  else checkTree(ctx, ref.fs_root, n);
  if (ref.memory !== undefined) checkPlain(ctx, ref.memory, "memory", n);
  checkPlain(ctx, ref.manifest, "manifest", n);
}

function checkPlain(ctx: Ctx, address: Digest, kind: ObjectKind, n: number, path = ""): void {
  if (ctx.b.objects[address] === undefined) {
    absent(ctx, address, kind, n, path);
    return;
  }
  const bytes = unb64(ctx.b.objects[address])?.length ?? null;
  attempt(ctx, { address, kind, segment: n, bytes, path }, () => objectOf(ctx, address));
}

// §13.8 as verifyStoredTree: every directory checked against its address and stated size, every
// leaf re-hashed and its size compared; leaves the writer did not embed are listed as omitted.
function checkTree(ctx: Ctx, root: Digest, n: number): void {
  const meta = { address: root, kind: "directory" as const, segment: n, path: "/", bytes: null };
  attempt(ctx, meta, () =>
    walkFsTree(root, {
      getDir: (a) => objectOf(ctx, a),
      checkLeaf: (a, size, kind, path) => {
        if (ctx.b.objects[a] === undefined) {
          if (ctx.b.omitted[a] === undefined)
            throw new SandboxAttestError("ObjectMissing", `object ${a} (${path}) is not in the store`);
          absent(ctx, a, kind === "symlink" ? "symlink" : "file", n, path);
          return;
        }
        const bytes = unb64(ctx.b.objects[a]);
        const leaf = {
          address: a,
          kind: kind === "symlink" ? ("symlink" as const) : ("file" as const),
          segment: n,
          path,
        };
        if (bytes === null || BigInt(bytes.length) !== size || !sameAddress(a, bytes)) {
          const e = new SandboxAttestError(
            "ObjectMismatch",
            `object ${a} (${path}) does not match its address or size`,
          );
          note(ctx, {
            ...leaf,
            state: "invalid",
            code: e.code,
            message: e.reason,
            bytes: bytes?.length ?? null,
          });
          throw e;
        }
        ctx.objects.push({
          address: a,
          kind: kind === "symlink" ? "symlink" : "file",
          segment: n,
          path,
          state: "valid",
          code: null,
          message: null,
          bytes: bytes.length,
        });
      },
    }),
  );
}

function sameAddress(a: Digest, bytes: Uint8Array): boolean {
  try {
    checkObject(a, bytes);
    return true;
  } catch {
    return false;
  }
}

/** parseJournals recomputes each embedded journal's tree head (§8); a malformed one is invalid. */
function parseJournals(ctx: Ctx): void {
  ctx.b.journals.forEach((text, i) => {
    const bytes = unb64(text);
    try {
      if (bytes === null) throw new SandboxAttestError("MalformedEvent", "journal is not base64");
      const events: Json = parseCanonical(bytes);
      if (!Array.isArray(events))
        throw new SandboxAttestError("MalformedEvent", "a journal is a list of events");
      const j = Journal.from(events);
      const h = j.head();
      ctx.journals.push({ events: j.events, root: h.root, size: h.size, used: false });
    } catch (e) {
      const c = codeOf(e);
      note(ctx, {
        address: `journal #${i + 1}`,
        kind: "journal",
        segment: 0,
        state: "invalid",
        ...c,
        bytes: null,
      });
    }
  });
}

function checkObjects(ctx: Ctx): void {
  const seen = new Set<Digest>();
  parseJournals(ctx);
  const firstJournalError = ctx.first;
  ctx.first = null;
  ctx.record.segments.forEach((s, i) => {
    if (s.kind === "executed") checkAttestation(ctx, s.attestation, i + 1);
    else if (s.kind !== "closed" && s.kind !== "moved") checkSnapshot(ctx, s.snapshot, i + 1, seen);
  });
  if (ctx.manifests.size > 1)
    ctx.first ??= {
      code: "ManifestMismatch",
      message: `the run cites ${ctx.manifests.size} different manifests`,
    };
  ctx.journals.forEach((j, i) => {
    if (j.used)
      note(ctx, {
        address: j.root,
        kind: "journal",
        segment: 0,
        state: "valid",
        code: null,
        message: null,
        bytes: null,
      });
    else
      note(ctx, {
        address: `journal #${i + 1} (${j.root})`,
        kind: "journal",
        segment: 0,
        state: "invalid",
        code: "JournalMismatch",
        message: `no verified interval binds a journal of root ${j.root} and ${j.size} events`,
        bytes: null,
      });
  });
  ctx.first ??= firstJournalError;
  ctx.first ??= ctx.late;
  missingJournals(ctx);
}

// §13.7.3 item 6, as sbx verify applies it (verifyRun): a store that kept some interval's journal
// keeps every interval's, so an absent root beside a kept journal is a journal taken away.
function missingJournals(ctx: Ctx): void {
  if (ctx.kept === 0) return;
  for (const a of ctx.absent) {
    const message = `the store keeps this run's journals but not that of segment ${a.segment} (root ${a.address})`;
    ctx.objects.push({
      address: a.address,
      kind: "journal",
      segment: a.segment,
      path: "",
      state: "invalid",
      code: "ObjectMissing",
      message,
      bytes: null,
    });
    ctx.first ??= { code: "ObjectMissing", message };
  }
}

/**
 * checkRun verifies an embedded run (§13.9) against `trust` (host did:keys; empty: any signer, the
 * verdict at best UNTRUSTED). Never throws for a bad record or object: each object has its verdict,
 * and `error` is the first failure in the order `sbx verify` meets it.
 */
export function checkRun(b: RunBundle, trust: readonly string[]): RunCheck {
  const bytes = unb64(b.record);
  let record: RunRecord;
  try {
    if (bytes === null) throw new SandboxAttestError("BadRecord", "the embedded record is not base64");
    record = decodeRecord(bytes).record;
    if (b.expect_head !== undefined && record.head !== b.expect_head)
      throw new SandboxAttestError(
        "HeadMismatch",
        `record ends at ${record.head}, expected ${b.expect_head}`,
      );
  } catch (e) {
    const error = codeOf(e);
    const rec: ObjectCheck = {
      address: "run record",
      kind: "record",
      segment: 0,
      path: "",
      state: "invalid",
      ...error,
      bytes: bytes?.length ?? null,
    };
    return {
      valid: false,
      trusted: false,
      error,
      record: null,
      objects: [rec],
      intervals: new Map(),
      energy: null,
      signers: [],
    };
  }
  const ctx: Ctx = {
    b,
    record,
    hosts: trust.length > 0 ? trust : undefined,
    objects: [],
    intervals: new Map(),
    active: new Map(),
    signers: new Set(),
    manifests: new Set(),
    journals: [],
    first: null,
    late: null,
    kept: 0,
    absent: [],
  };
  ctx.objects.push({
    address: record.head,
    kind: "record",
    segment: 0,
    path: "",
    state: "valid",
    code: null,
    message: null,
    bytes: bytes.length,
  });
  checkObjects(ctx);
  const valid = ctx.first === null;
  return {
    valid,
    trusted: valid && trust.length > 0,
    error: ctx.first,
    record,
    objects: ctx.objects,
    intervals: ctx.intervals,
    energy: valid ? runEnergy(record.segments, (a) => ctx.active.get(a) ?? null) : null,
    signers: [...ctx.signers].sort(),
  };
}
