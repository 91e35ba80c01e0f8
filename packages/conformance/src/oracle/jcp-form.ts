// The JCP oracle, part 1 (jcp §4.1–§4.2): opening a signed object, the grant form, patterns and
// scopes, restated literally from the spec text. It shares no code with @sbx/jcp-grant: only the
// wire primitives of sandbox-attest §2 (DSSE opening, did:key, digests, amounts) are reused. Slow and
// plain on purpose: vector generation checks the implementation's answers against it (oracle/jcp.ts).
import {
  assertEnvelopeShape,
  isAmount,
  isDidKey,
  isDigest,
  isWireError,
  openEnvelope,
  parseAmount,
  type Digest,
  type JsonObject,
} from "@sbx/wire";

/** Refused: the oracle's answer when the spec names a code. */
export class Refused extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/** no refuses with `code`. */
export function no(code: string): never {
  throw new Refused(code);
}

/** An effective grant (§4.1): every member resolved; `null` is unlimited. */
export interface Effective {
  address: Digest;
  issuer: string;
  holder: string;
  parent: Digest | null;
  resources: string[];
  actions: string[];
  uj: bigint;
  calls: number | null;
  wall_ms: number | null;
  nbf_ms: number;
  exp_ms: number;
  depth: number;
}

/** An opened grant: its payload as signed and its address. */
export interface Opened {
  payload: JsonObject;
  address: Digest;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/**
 * openSignedBy opens a DSSE envelope of `type` by the §2.4 wire rules with a payload of at most
 * `max` bytes (`tooBig` otherwise), and requires exactly one signature, by the payload member
 * `signer` names (`BadSignature`), after `form` has checked the payload.
 */
export function openSignedBy(
  env: unknown,
  type: string,
  max: number,
  tooBig: string,
  form: (p: JsonObject) => void,
  signer: string,
): Opened {
  let opened;
  try {
    opened = openEnvelope(env, { payloadType: type, maxBytes: max });
  } catch (e) {
    if (isWireError(e)) no(e.code === "OversizeInput" ? tooBig : e.code);
    throw e;
  }
  form(opened.payload);
  if (opened.signers.length !== 1 || opened.signers[0] !== opened.payload[signer]) no("BadSignature");
  return { payload: opened.payload, address: opened.address };
}

const GRANT_TYPE = "application/vnd.jcp.grant+json";

/**
 * openGrant follows §4.1 "Opening a grant" step by step: shape, payloadType, the base64 text's
 * length (more than 10924 characters is over 8192 bytes), exactly one signature, then the wire
 * opening (decoded size, signature, canonical bytes), the form, and the issuer as signer.
 */
export function openGrant(env: unknown): Opened {
  try {
    assertEnvelopeShape(env);
  } catch (e) {
    if (isWireError(e)) no(e.code);
    throw e;
  }
  if (env.payloadType !== GRANT_TYPE) no("WrongPayloadType");
  if (env.payload.length > 10924) no("GrantTooLarge");
  if (env.signatures.length !== 1) no("BadSignature");
  return openSignedBy(env, GRANT_TYPE, 8192, "GrantTooLarge", checkGrantForm, "issuer");
}

const MEMBERS = [
  "issuer",
  "holder",
  "parent",
  "scope",
  "budget",
  "nbf_ms",
  "exp_ms",
  "depth",
  "nonce",
  "mint",
];

/** checkGrantForm is the §4.1 table: every rule a `BadGrant`, a malformed pattern `BadPattern`. */
export function checkGrantForm(g: JsonObject): void {
  for (const k of Object.keys(g)) if (!MEMBERS.includes(k)) no("BadGrant");
  if (!isDidKey(g.issuer) || !isDidKey(g.holder)) no("BadGrant");
  if (g.parent !== null && !isDigest(g.parent)) no("BadGrant");
  if (g.scope !== undefined) checkScopeFields(g.scope);
  if (g.budget !== undefined) checkBudgetFields(g.budget);
  if (!isCount(g.exp_ms)) no("BadGrant");
  if (g.nbf_ms !== undefined && (!isCount(g.nbf_ms) || g.nbf_ms >= g.exp_ms)) no("BadGrant");
  if (g.depth !== undefined && (!isCount(g.depth) || g.depth > 15)) no("BadGrant");
  if (typeof g.nonce !== "string" || !/^[0-9a-f]{32}$/.test(g.nonce)) no("BadGrant");
  if (g.mint !== undefined) {
    const m = g.mint;
    if (g.parent === null || !isObject(m) || Object.keys(m).sort().join() !== "event,policy") no("BadGrant");
    if (!isDigest(m.policy) || !isDigest(m.event)) no("BadGrant");
  }
  if (g.parent === null) {
    const s = g.scope as Record<string, unknown> | undefined;
    const b = g.budget as Record<string, unknown> | undefined;
    if (s?.resources === undefined || s.actions === undefined) no("BadGrant");
    if (b?.uj === undefined || g.depth === undefined) no("BadGrant");
  }
}

function checkScopeFields(v: unknown): void {
  if (!isObject(v) || Object.keys(v).length === 0) no("BadGrant");
  for (const k of Object.keys(v)) if (k !== "resources" && k !== "actions") no("BadGrant");
  if (v.resources !== undefined) checkResources(v.resources);
  if (v.actions !== undefined) checkActions(v.actions);
}

function checkBudgetFields(v: unknown): void {
  if (!isObject(v) || Object.keys(v).length === 0) no("BadGrant");
  for (const k of Object.keys(v)) if (!["uj", "calls", "wall_ms"].includes(k)) no("BadGrant");
  if (v.uj !== undefined && !isAmount(v.uj)) no("BadGrant");
  if (v.calls !== undefined && !isCount(v.calls)) no("BadGrant");
  if (v.wall_ms !== undefined && !isCount(v.wall_ms)) no("BadGrant");
}

/** ascending: strictly increasing by byte (all characters are ASCII), so sorted and duplicate-free. */
function ascending(xs: string[]): boolean {
  return xs.every((x, i) => i === 0 || xs[i - 1]! < x);
}

/** checkResources (§4.2): 1–64 patterns, ascending (`BadGrant`), each a pattern (`BadPattern`). */
export function checkResources(v: unknown): void {
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) no("BadGrant");
  const xs = v;
  if (xs.length < 1 || xs.length > 64 || !ascending(xs)) no("BadGrant");
  for (const p of xs) parsePattern(p);
}

/** checkActions (§4.2): 1–32 names `[a-z][a-z0-9._:-]{0,63}`, ascending (`BadGrant`). */
export function checkActions(v: unknown): void {
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) no("BadGrant");
  const xs = v;
  if (xs.length < 1 || xs.length > 32 || !ascending(xs)) no("BadGrant");
  if (!xs.every((a) => /^[a-z][a-z0-9._:-]{0,63}$/.test(a))) no("BadGrant");
}

/** A pattern: its segments before an optional trailing `/**`. */
export interface Pattern {
  segments: string[];
  subtree: boolean;
}

/**
 * parsePattern reads the §4.2 grammar: `/**`, or `/`-separated segments with an optional final
 * `**`; at most 256 bytes and 32 parts (`**` counted); a segment is `*` or pchar without `%`, `*`,
 * and is not empty, `.` or `..` (`BadPattern`).
 */
export function parsePattern(p: string): Pattern {
  if (Buffer.byteLength(p, "utf8") > 256 || !p.startsWith("/")) no("BadPattern");
  const parts = p.slice(1).split("/");
  if (parts.length > 32) no("BadPattern");
  const subtree = parts[parts.length - 1] === "**";
  const segments = subtree ? parts.slice(0, -1) : parts;
  for (const s of segments) {
    if (s === "*") continue;
    if (s === "" || s === "." || s === ".." || !/^[A-Za-z0-9._~:@!$&'()+,;=-]+$/.test(s)) no("BadPattern");
  }
  return { segments, subtree };
}

/** covers is §4.2's two bullets: P covers C segment by segment, `*` in C only under `*` in P. */
export function covers(P: Pattern, C: Pattern): boolean {
  const k = P.segments.length;
  const sameAt = (i: number) => P.segments[i] === "*" || P.segments[i] === C.segments[i];
  if (!P.subtree) return !C.subtree && C.segments.length === k && P.segments.every((_, i) => sameAt(i));
  return C.segments.length >= k && P.segments.every((_, i) => sameAt(i));
}

/** scopeInside: each child pattern covered by some parent pattern, each child action a parent's. */
export function scopeInside(
  parent: { resources: string[]; actions: string[] },
  child: { resources: string[]; actions: string[] },
): boolean {
  const pats = parent.resources.map(parsePattern);
  return (
    child.resources.every((c) => pats.some((p) => covers(p, parsePattern(c)))) &&
    child.actions.every((a) => parent.actions.includes(a))
  );
}

/** amount reads a checked amount as a bigint. */
export function amount(v: unknown): bigint {
  return parseAmount(v);
}
