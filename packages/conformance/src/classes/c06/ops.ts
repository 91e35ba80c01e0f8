// The C6 operations (§13) as the adapter protocol names them, over the reference implementation.
// A record travels as its wire text (§13.5); snapshots and segments as their JSON objects.
import {
  addressOf,
  digestBytes,
  formatAmount,
  fromHex,
  isDigest,
  utf8,
  type Digest,
  type Json,
  type JsonObject,
} from "@sbx/wire";
import {
  checkResume,
  decodeRecord,
  encodeFsDir,
  encodeRecord,
  parseFsDir,
  parseSegment,
  parseSnapshotRef,
  resumedSegment,
  runEnergy,
  runGenesis,
  type FsEntry,
  type Provenance,
} from "@sbx/sandbox-attest/runrecord";
import type { Handler } from "../../types.ts";

function obj(v: Json | undefined, what = "input"): JsonObject {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new TypeError(`${what} must be an object`);
  return v;
}
function digest(v: Json | undefined, what: string): Digest {
  if (!isDigest(v)) throw new TypeError(`${what} must be a digest`);
  return v;
}
function text(v: Json | undefined, what: string): string {
  if (typeof v !== "string") throw new TypeError(`${what} must be a string`);
  return v;
}

function decode(o: JsonObject) {
  const opts = {
    ...(o.unit_id !== undefined ? { unitId: digest(o.unit_id, "unit_id") } : {}),
    ...(o.grants_id !== undefined ? { grantsId: digest(o.grants_id, "grants_id") } : {}),
    ...(o.expect_head !== undefined ? { expectHead: digest(o.expect_head, "expect_head") } : {}),
  };
  return decodeRecord(utf8(text(o.record, "record")), opts).record;
}

function summary(o: JsonObject): Json {
  const r = decode(o);
  const e = runEnergy(r.segments, () => null);
  return {
    genesis: r.genesis,
    head: r.head,
    heads: [...r.heads],
    phase: r.phase,
    segments: r.segments.length,
    idle_uj: e.idle_uj,
  };
}

/** A tree as vectors describe it: files by hex content, symlinks by target, dirs by entries. */
function treeRoot(entries: Json, out: { dirs: number }): { digest: Digest; size: number } {
  if (!Array.isArray(entries)) throw new TypeError("entries must be a list");
  const list: FsEntry[] = entries.map((x) => {
    const e = obj(x, "entry");
    const name = text(e.name, "name");
    if (e.kind === "dir") {
      const child = treeRoot(e.entries ?? [], out);
      return {
        name,
        kind: "dir",
        mode: Number(e.mode),
        size: formatAmount(BigInt(child.size)),
        digest: child.digest,
      };
    }
    const bytes =
      e.kind === "symlink" ? utf8(text(e.target, "target")) : fromHex(text(e.content_hex, "content_hex"));
    return {
      name,
      kind: e.kind === "symlink" ? "symlink" : "file",
      mode: e.kind === "symlink" ? 0o777 : Number(e.mode),
      size: formatAmount(BigInt(bytes.length)),
      digest: digestBytes(bytes),
    };
  });
  const bytes = encodeFsDir(list);
  parseFsDir(bytes); // what a verifier would refuse, the builder refuses too
  out.dirs++;
  return { digest: digestBytes(bytes), size: bytes.length };
}

/** The C6 handlers. */
export const ops: Record<string, Handler> = {
  "runrecord.genesis": (i) => ({
    head: runGenesis(digest(obj(i).unit_id, "unit_id"), digest(obj(i).grants_id, "grants_id")),
  }),
  "runrecord.verify": (i) => summary(obj(i)),
  "runrecord.append": (i) => {
    const o = obj(i);
    const r = decode(o);
    const head = r.append(parseSegment(o.segment));
    return { head, record: new TextDecoder().decode(encodeRecord(r)) };
  },
  "runrecord.resume": async (i) => {
    const o = obj(i);
    const r = decode(o);
    const ok = o.environment_satisfies === true;
    const snap = await checkResume(r, parseSnapshotRef(o.offered), { satisfies: () => ok });
    const idle = obj(o.idle, "idle");
    const basis = idle.basis === undefined ? {} : { basis: obj(idle.basis) as Record<string, string> };
    const seg = resumedSegment(snap, Number(o.at_ms), {
      uj: text(idle.uj, "uj"),
      provenance: text(idle.provenance, "provenance") as Provenance,
      source: text(idle.source, "source"),
      ...basis,
    });
    const head = r.append(parseSegment(seg));
    return { segment: seg as unknown as Json, head };
  },
  "runrecord.energy": (i) => {
    const o = obj(i);
    const active = obj(o.active_uj, "active_uj");
    const e = runEnergy(decode(o).segments, (a) => (typeof active[a] === "string" ? active[a] : null));
    return { ...e, idle_by_provenance: { ...e.idle_by_provenance }, unresolved: [...e.unresolved] };
  },
  "fstree.root": (i) => {
    const out = { dirs: 0 };
    const root = treeRoot(obj(i).entries ?? [], out);
    return { fs_root: root.digest, dirs: out.dirs };
  },
  "fstree.parse_dir": (i) => ({
    entries: parseFsDir(utf8(text(obj(i).text, "text"))).entries.length,
    address: addressOf(JSON.parse(text(obj(i).text, "text")) as Json),
  }),
};
