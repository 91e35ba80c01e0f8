// The exec-policy oracle (sandbox-attest §5.5.2–§5.5.4), refusals included: the payload's checks in
// the order §5.5.3 states, `execpolicy.make`'s edits, and the decision table of §5.5.4. Written from
// the spec; nothing is imported from @sbx/sandbox-attest, only the §2 wire primitives (DSSE opening,
// digests, JCS). Generation compares it with every C8 vector and with the implementation.
import { addressOf, isWireError, openEnvelope, type Json, type JsonObject } from "@sbx/wire";
import { no, Refused } from "./jcp-form.ts";
import type { OracleResult } from "./jcp.ts";

const TYPE = "sandbox-attest/exec-policy/1";
const PAYLOAD_TYPE = "application/vnd.sandbox-attest.exec-policy+json";
const MAX_ENTRIES = 65536;
const DIGEST = /^blake3:[0-9a-f]{64}$/;
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** checkList: a list of at most 65,536 entries, then entry by entry: a digest, no repeat of the one before, not before it. */
function checkList(v: unknown): string[] {
  if (!Array.isArray(v) || v.length > MAX_ENTRIES) no("BadExecPolicy");
  const xs: unknown[] = v;
  for (let i = 0; i < xs.length; i++) {
    const d = xs[i];
    if (typeof d !== "string" || !DIGEST.test(d)) no("ExecPolicyBadDigest");
    if (i > 0 && xs[i - 1] === d) no("ExecPolicyDuplicate");
    // Every earlier entry is already a digest (ASCII), so comparing code units is comparing bytes.
    if (i > 0 && (xs[i - 1] as string) > d) no("ExecPolicyUnsorted");
  }
  return xs as string[];
}

/** checkPolicy is §5.5.3's order: members, type, mode, the whole allow list, then the deny list. */
function checkPolicy(p: unknown): { mode: string; allow: string[]; deny: string[] } {
  if (!isObj(p) || Object.keys(p).sort().join() !== "allow,deny,mode,type") no("BadExecPolicy");
  if (p.type !== TYPE) no("BadExecPolicy");
  if (p.mode !== "allowlist" && p.mode !== "denylist") no("BadExecPolicy");
  const allow = checkList(p.allow);
  const deny = checkList(p.deny);
  return { mode: p.mode, allow, deny };
}

function open(i: JsonObject): Json {
  let opened;
  try {
    opened = openEnvelope(i.envelope, {
      payloadType: PAYLOAD_TYPE,
      ...(Array.isArray(i.stewards) ? { signers: i.stewards.map(String) } : {}),
    });
  } catch (e) {
    if (isWireError(e)) no(e.code);
    throw e;
  }
  checkPolicy(opened.payload);
  if (typeof i.address === "string" && i.address !== opened.address) no("ExecPolicyMismatch");
  return { address: opened.address, policy: opened.payload };
}

/** make: mode, then every entry of allow and of deny a digest; each list sorted, repeats dropped. */
function make(i: JsonObject): Json {
  if (i.mode !== "allowlist" && i.mode !== "denylist") no("BadExecPolicy");
  const edits = (v: Json | undefined): string[] => {
    const xs = Array.isArray(v) ? v : [];
    for (const d of xs) if (typeof d !== "string" || !DIGEST.test(d)) no("ExecPolicyBadDigest");
    const set: string[] = [];
    for (const d of xs as string[]) if (!set.includes(d)) set.push(d);
    return set.sort();
  };
  const allow = edits(i.allow);
  const deny = edits(i.deny);
  const policy = { type: TYPE, mode: i.mode, allow, deny };
  return { address: addressOf(policy), policy };
}

/** decide is §5.5.4: deny wins whatever else; then listed is allowed; else the mode decides. */
function decide(i: JsonObject): Json {
  const p = checkPolicy(i.policy);
  const d = i.digest;
  if (p.deny.includes(d as string)) return { allowed: false, rule: "denied" };
  if (p.allow.includes(d as string)) return { allowed: true, rule: "allowed" };
  if (p.mode === "allowlist") return { allowed: false, rule: "not-allowed" };
  return { allowed: true, rule: "default" };
}

const OPS: Record<string, (i: JsonObject) => Json> = {
  "execpolicy.open": open,
  "execpolicy.make": make,
  "execpolicy.decide": decide,
};

/** execPolicyOracle answers the C8 wire ops, refusals included; undefined for any other op. */
export function execPolicyOracle(op: string, input: Json): OracleResult | undefined {
  const f = OPS[op];
  if (f === undefined) return undefined;
  try {
    return { ok: true, output: f(input as JsonObject) };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, error: e.code };
    throw e;
  }
}
