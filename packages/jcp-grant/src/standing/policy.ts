// §4.6 The mint policy: signed by the issuer of the held grant, it states who may mint, on which
// events, what each child may be, and the caps and rate that bound all children together.
import {
  isAmount,
  isDidKey,
  isDigest,
  openEnvelope,
  parseAmount,
  signPayload,
  WireError,
  type Amount,
  type Digest,
  type Envelope,
  type KeyPair,
} from "@sbx/wire";
import { JcpError } from "../errors.ts";
import { checkActions, checkResources } from "../grant/scope.ts";
import { rethrow } from "../grant/open.ts";
import { MAX_DEPTH } from "../grant/limits.ts";

/** The payload type of a mint policy (§4.6). */
export const POLICY_PAYLOAD_TYPE = "application/vnd.jcp.mintpolicy+json";
/** Largest mint policy payload in bytes. */
export const MAX_POLICY_BYTES = 8192;
/** Most triggers in one policy. */
export const MAX_TRIGGERS = 32;

/** One trigger: an event of this type from this source; optionally signed by the key `signed_by`. */
export interface Trigger {
  readonly type: string;
  readonly source: string;
  readonly signed_by?: string;
}

/** What every minted child is: its holder, at most this scope and budget, at most this lifetime. */
export interface ChildTemplate {
  readonly holder: string;
  readonly resources: readonly string[];
  readonly actions: readonly string[];
  readonly uj: Amount;
  readonly calls?: number;
  readonly lifetime_ms: number;
  readonly depth: number;
}

/** A mint policy payload exactly as signed (§4.6). */
export interface PolicyPayload {
  readonly grant: Digest;
  readonly issuer: string;
  readonly minter: string;
  readonly triggers: readonly Trigger[];
  readonly template: ChildTemplate;
  readonly max_children: number;
  readonly max_total_uj: Amount;
  readonly rate: { readonly count: number; readonly window_ms: number };
  readonly nbf_ms: number;
  readonly exp_ms: number;
}

const NAME_RE = /^[a-z][a-z0-9._:/-]{0,127}$/;

function bad(why: string): JcpError {
  return new JcpError("BadPolicy", why);
}
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
function exactKeys(o: Record<string, unknown>, req: string[], opt: string[], what: string): void {
  for (const k of req) if (!(k in o)) throw bad(`${what} lacks ${k}`);
  for (const k of Object.keys(o))
    if (!req.includes(k) && !opt.includes(k)) throw bad(`${what} has unknown ${k.slice(0, 40)}`);
}
function int(v: unknown, what: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max)
    throw bad(`${what} must be an integer from ${min} to ${max}`);
  return v;
}

function checkTrigger(t: unknown): void {
  if (!isObject(t)) throw bad("a trigger is an object");
  exactKeys(t, ["type", "source"], ["signed_by"], "trigger");
  if (typeof t.type !== "string" || !NAME_RE.test(t.type)) throw bad("trigger.type is a name");
  if (typeof t.source !== "string" || !NAME_RE.test(t.source)) throw bad("trigger.source is a name");
  if (t.signed_by !== undefined && !isDidKey(t.signed_by)) throw bad("trigger.signed_by is a did:key");
}

function checkTemplate(t: unknown): void {
  if (!isObject(t)) throw bad("template is an object");
  exactKeys(t, ["holder", "resources", "actions", "uj", "lifetime_ms", "depth"], ["calls"], "template");
  if (!isDidKey(t.holder)) throw bad("template.holder is a did:key");
  const list = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");
  if (!list(t.resources) || !list(t.actions)) throw bad("template scope lists are lists of strings");
  try {
    checkResources(t.resources);
    checkActions(t.actions);
  } catch (e) {
    if (e instanceof JcpError && e.code === "BadGrant") throw bad(e.message);
    throw e;
  }
  if (!isAmount(t.uj)) throw bad("template.uj is a decimal amount");
  if (t.calls !== undefined) int(t.calls, "template.calls");
  int(t.lifetime_ms, "template.lifetime_ms", 1);
  int(t.depth, "template.depth", 0, MAX_DEPTH);
}

/**
 * checkPolicyPayload checks a parsed payload against the mint policy form (§4.6) and returns it
 * typed. Refuses (`BadPolicy`) unknown or missing members, a `grant` that is not a digest,
 * principals that are not did:keys, 0 or more than 32 triggers, a bad template (`BadPattern` for a
 * bad pattern), caps or rate that are not positive integers or amounts, and an empty window.
 */
export function checkPolicyPayload(v: unknown): PolicyPayload {
  if (!isObject(v)) throw bad("a policy is an object");
  const req = ["grant", "issuer", "minter", "triggers", "template", "max_children", "max_total_uj"];
  exactKeys(v, [...req, "rate", "nbf_ms", "exp_ms"], [], "policy");
  if (!isDigest(v.grant)) throw bad("grant is a digest");
  if (!isDidKey(v.issuer) || !isDidKey(v.minter)) throw bad("issuer and minter are did:keys");
  if (!Array.isArray(v.triggers) || v.triggers.length < 1 || v.triggers.length > MAX_TRIGGERS)
    throw bad(`triggers holds 1 to ${MAX_TRIGGERS} triggers`);
  v.triggers.forEach(checkTrigger);
  checkTemplate(v.template);
  int(v.max_children, "max_children", 1);
  if (!isAmount(v.max_total_uj)) throw bad("max_total_uj is a decimal amount");
  if (!isObject(v.rate)) throw bad("rate is an object");
  exactKeys(v.rate, ["count", "window_ms"], [], "rate");
  int(v.rate.count, "rate.count", 1);
  int(v.rate.window_ms, "rate.window_ms", 1);
  if (int(v.nbf_ms, "nbf_ms") >= int(v.exp_ms, "exp_ms")) throw bad("nbf_ms must be before exp_ms");
  return v as unknown as PolicyPayload;
}

/** An opened policy: its payload and address. */
export interface OpenedPolicy {
  readonly payload: PolicyPayload;
  readonly address: Digest;
}

/**
 * openPolicy verifies a policy envelope (§4.6): the wire checks (`BadEnvelope`, `WrongPayloadType`,
 * `BadSignature`, `NotCanonical`, …; over 8 KiB `BadPolicy`), the form (checkPolicyPayload), and
 * exactly one signature, by the `issuer` it names (`BadSignature`). Whether that issuer is the held
 * grant's issuer is checked against the grant (`PolicyNotByIssuer`, see verifyMintLedger).
 */
export function openPolicy(env: unknown): OpenedPolicy {
  let opened;
  try {
    opened = openEnvelope(env, { payloadType: POLICY_PAYLOAD_TYPE, maxBytes: MAX_POLICY_BYTES });
  } catch (e) {
    if (e instanceof WireError && e.code === "OversizeInput") throw bad(e.message);
    rethrow(e);
  }
  const payload = checkPolicyPayload(opened.payload);
  if (opened.signers.length !== 1 || opened.signers[0] !== payload.issuer)
    throw new JcpError("BadSignature", "a policy carries one signature, its issuer's");
  return { payload, address: opened.address };
}

/**
 * createPolicy signs a mint policy as `issuer` (§4.6). Refuses a payload that fails the form
 * (`BadPolicy`) and one whose `issuer` is not the signer (`PolicyNotByIssuer`).
 */
export function createPolicy(issuer: KeyPair, payload: PolicyPayload): Envelope {
  const p = checkPolicyPayload(JSON.parse(JSON.stringify(payload)));
  if (p.issuer !== issuer.did)
    throw new JcpError("PolicyNotByIssuer", "a policy is signed by the issuer it names");
  return signPayload(POLICY_PAYLOAD_TYPE, p, issuer);
}

/** policyTotal returns the policy's total budget cap as a bigint. */
export function policyTotal(p: PolicyPayload): bigint {
  return parseAmount(p.max_total_uj);
}
