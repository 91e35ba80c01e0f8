// §15.2 Ledger entries: exact member sets per kind, checked before any accounting.
import { isAmount, isDigest, type JsonObject } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { assertFigure } from "./figure.ts";
import { EVICTION_REASONS, type PoolDescriptor, type PoolEntry } from "./types.ts";

const MEMBERS: Readonly<Record<PoolEntry["kind"], string>> = {
  provisioned: "at_ms,item,kind,manifest,prev,provision,seq",
  accrued: "from_ms,item,kind,prev,residency,seq,to_ms",
  claimed: "accrued_uj,at_ms,grants,item,kind,prev,provision_uj,residency_uj,seq,unit",
  evicted: "at_ms,item,kind,overhead_uj,prev,provision_uj,reason,residency_uj,seq",
  closed: "at_ms,claimed_uj,drawn_uj,evicted_uj,kind,prev,seq",
};

/** Item ids are short names safe in paths and logs: letters, digits, `.`, `_`, `-`. */
export const ITEM_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function bad(msg: string): never {
  throw new SandboxAttestError("BadPoolEntry", msg);
}

function isTime(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function checkFields(o: Record<string, unknown>, kind: PoolEntry["kind"]): void {
  const where = `${kind} entry ${String(o.seq)}`;
  for (const k of ["at_ms", "from_ms", "to_ms"])
    if (k in o && !isTime(o[k])) bad(`${where}: ${k} must be a non-negative integer`);
  for (const k of ["manifest", "unit", "grants", "prev"])
    if (k in o && !isDigest(o[k])) bad(`${where}: ${k} must be a digest`);
  for (const k of [
    "accrued_uj",
    "provision_uj",
    "residency_uj",
    "overhead_uj",
    "drawn_uj",
    "claimed_uj",
    "evicted_uj",
  ])
    if (k in o && !isAmount(o[k])) bad(`${where}: ${k} must be an amount`);
  if ("item" in o && (typeof o.item !== "string" || !ITEM_ID_RE.test(o.item)))
    bad(`${where}: item id is not a valid name`);
  if ("reason" in o && !(EVICTION_REASONS as readonly unknown[]).includes(o.reason))
    bad(`${where}: unknown eviction reason`);
  if ("provision" in o) assertFigure(o.provision, where);
  if ("residency" in o) assertFigure(o.residency, where);
}

/** parseEntry checks one entry payload's shape (§15.2); refuses `BadPoolEntry` for any other shape. */
export function parseEntry(payload: JsonObject): PoolEntry {
  const kind = payload.kind;
  if (typeof kind !== "string" || !Object.hasOwn(MEMBERS, kind))
    bad(`unknown entry kind ${typeof kind === "string" ? kind : typeof kind}`);
  const k = kind as PoolEntry["kind"];
  if (Object.keys(payload).sort().join(",") !== MEMBERS[k])
    bad(`${k} entry members are ${Object.keys(payload).sort().join(",")}`);
  if (typeof payload.seq !== "number" || !Number.isSafeInteger(payload.seq) || payload.seq < 0)
    bad("seq must be a non-negative integer");
  checkFields(payload, k);
  return payload as unknown as PoolEntry;
}

/** parseDescriptor checks a pool descriptor's shape (§15.1); refuses `BadPoolEntry`. */
export function parseDescriptor(payload: JsonObject): PoolDescriptor {
  const o = payload as Record<string, unknown>;
  if (Object.keys(o).sort().join(",") !== "created_ms,host,kind,manifest,name" || o.kind !== "pool")
    bad("a pool descriptor is {kind: pool, name, host, manifest, created_ms}");
  if (typeof o.name !== "string" || !ITEM_ID_RE.test(o.name)) bad("pool name is not a valid name");
  if (typeof o.host !== "string" || !o.host.startsWith("did:key:")) bad("pool host must be a did:key");
  if (!isDigest(o.manifest) || !isTime(o.created_ms))
    bad("pool manifest must be a digest and created_ms a time");
  return payload as unknown as PoolDescriptor;
}
