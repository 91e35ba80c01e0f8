// §5.5.2 The exec policy object: canonical, content-addressed, signed by the steward.
import {
  addressOf,
  isDigest,
  openEnvelope,
  signPayload,
  type Digest,
  type Envelope,
  type KeyPair,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";

/** The DSSE payload type of a signed exec policy (§5.5.2). */
export const EXEC_POLICY_PAYLOAD_TYPE = "application/vnd.sandbox-attest.exec-policy+json";
/** The `type` member every exec policy carries (§5.5.2). */
export const EXEC_POLICY_TYPE = "sandbox-attest/exec-policy/1";
/** Largest number of digests one list may hold. */
export const EXEC_POLICY_MAX_DIGESTS = 65536;

/** allowlist: only allowed digests run; denylist: everything not denied runs. Deny wins in both. */
export type ExecMode = "allowlist" | "denylist";

/** An exec policy (§5.5.2): both lists sorted ascending and free of duplicates. */
export interface ExecPolicy {
  readonly type: typeof EXEC_POLICY_TYPE;
  readonly mode: ExecMode;
  readonly allow: readonly Digest[];
  readonly deny: readonly Digest[];
}

/** A verified, signed policy with its address and signers. */
export interface OpenedPolicy {
  readonly policy: ExecPolicy;
  readonly address: Digest;
  readonly signers: readonly string[];
}

function normalize(list: readonly string[], what: string): Digest[] {
  for (const d of list)
    if (!isDigest(d))
      throw new SandboxAttestError("ExecPolicyBadDigest", `${what}: ${d} is not a blake3 digest`);
  return [...new Set(list as Digest[])].sort();
}

/**
 * makePolicy builds a policy in canonical form (§5.5.2): lists sorted and deduplicated.
 * Refuses a mode other than allowlist/denylist (`BadExecPolicy`) and malformed digests
 * (`ExecPolicyBadDigest`).
 */
export function makePolicy(
  mode: string,
  allow: readonly string[] = [],
  deny: readonly string[] = [],
): ExecPolicy {
  if (mode !== "allowlist" && mode !== "denylist")
    throw new SandboxAttestError("BadExecPolicy", `mode ${mode}`);
  return { type: EXEC_POLICY_TYPE, mode, allow: normalize(allow, "allow"), deny: normalize(deny, "deny") };
}

function strictList(v: unknown, what: string): Digest[] {
  if (!Array.isArray(v)) throw new SandboxAttestError("BadExecPolicy", `${what} must be a list`);
  if (v.length > EXEC_POLICY_MAX_DIGESTS)
    throw new SandboxAttestError("BadExecPolicy", `${what} holds ${v.length} digests`);
  const list = v as unknown[];
  list.forEach((d, i) => {
    if (!isDigest(d))
      throw new SandboxAttestError("ExecPolicyBadDigest", `${what}[${i}] is not a blake3 digest`);
    const prev = list[i - 1] as string | undefined;
    if (prev === d) throw new SandboxAttestError("ExecPolicyDuplicate", `${what}[${i}] repeats ${d}`);
    if (prev !== undefined && prev > d)
      throw new SandboxAttestError("ExecPolicyUnsorted", `${what}[${i}] sorts before ${prev}`);
  });
  return list as Digest[];
}

/**
 * parsePolicy checks a parsed payload is an exec policy (§5.5.2). Refuses unknown or missing
 * members, a wrong `type` or `mode` (`BadExecPolicy`), malformed digests (`ExecPolicyBadDigest`),
 * and lists out of order (`ExecPolicyUnsorted`) or with repeats (`ExecPolicyDuplicate`).
 */
export function parsePolicy(value: unknown): ExecPolicy {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new SandboxAttestError("BadExecPolicy", "policy is not an object");
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o).sort().join(",");
  if (keys !== "allow,deny,mode,type")
    throw new SandboxAttestError("BadExecPolicy", `policy members are ${keys}, want allow,deny,mode,type`);
  if (o.type !== EXEC_POLICY_TYPE)
    throw new SandboxAttestError("BadExecPolicy", `type ${String(o.type)}, want ${EXEC_POLICY_TYPE}`);
  if (o.mode !== "allowlist" && o.mode !== "denylist")
    throw new SandboxAttestError("BadExecPolicy", `mode ${String(o.mode)}`);
  return {
    type: EXEC_POLICY_TYPE,
    mode: o.mode,
    allow: strictList(o.allow, "allow"),
    deny: strictList(o.deny, "deny"),
  };
}

/** policyAddress is the content address of a policy: the digest of its JCS bytes (§5.5.2). */
export function policyAddress(p: ExecPolicy): Digest {
  return addressOf(p);
}

/** signPolicy signs a policy with the steward's key into a DSSE envelope (§5.5.2); refuses nothing. */
export function signPolicy(p: ExecPolicy, steward: KeyPair | readonly KeyPair[]): Envelope {
  return signPayload(EXEC_POLICY_PAYLOAD_TYPE, parsePolicy(p), steward);
}

/**
 * openPolicy verifies a signed policy (§5.5.3): the envelope (wire codes `BadEnvelope`,
 * `WrongPayloadType`, `BadSignature`, `UnknownSigner`, `NotCanonical`), then the policy's form
 * (the parsePolicy codes), then, when `address` is given, that it is the policy bound elsewhere
 * (`ExecPolicyMismatch`).
 */
export function openPolicy(
  env: unknown,
  opts: { stewards?: readonly string[]; address?: Digest } = {},
): OpenedPolicy {
  const opened = openEnvelope(env, {
    payloadType: EXEC_POLICY_PAYLOAD_TYPE,
    ...(opts.stewards ? { signers: opts.stewards } : {}),
  });
  const policy = parsePolicy(opened.payload);
  if (opts.address !== undefined && opts.address !== opened.address)
    throw new SandboxAttestError("ExecPolicyMismatch", `policy is ${opened.address}, want ${opts.address}`);
  return { policy, address: opened.address, signers: opened.signers };
}
