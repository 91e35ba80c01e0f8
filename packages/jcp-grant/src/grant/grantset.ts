// §4.1 Grant sets: the set of grants a run executes under, named by one content address, the
// `grants_id` that a run record binds at genesis (sandbox-attest §4, §13).
import { addressOf, isDigest, type Digest } from "@sbx/wire";
import { JcpError } from "../errors.ts";
import { MAX_GRANT_SET } from "./limits.ts";
import { isSortedSet } from "./scope.ts";

/** The type tag inside a grant-set document. */
export const GRANT_SET_TYPE = "jcp.grant-set/1";

/** The canonical grant-set document: its addressed form. */
export interface GrantSetDoc {
  readonly type: typeof GRANT_SET_TYPE;
  readonly grants: readonly Digest[];
}

/**
 * grantSetDoc builds the canonical document of a set of grant addresses (§4.1): the addresses in
 * ascending order. Refuses (`BadGrantSet`) a member that is not a digest, a duplicate, or more
 * than 256 members. The empty set is allowed: a run under no grant holds no authority.
 */
export function grantSetDoc(addresses: readonly unknown[]): GrantSetDoc {
  if (addresses.length > MAX_GRANT_SET)
    throw new JcpError("BadGrantSet", `more than ${MAX_GRANT_SET} grants`);
  if (!addresses.every(isDigest)) throw new JcpError("BadGrantSet", "every member is a blake3 digest");
  const grants = [...addresses].sort();
  if (!isSortedSet(grants)) throw new JcpError("BadGrantSet", "a grant appears twice");
  return { type: GRANT_SET_TYPE, grants };
}

/** grantsId returns `grants_id`, the address of the grant-set document (§4.1); grantSetDoc's refusals. */
export function grantsId(addresses: readonly unknown[]): Digest {
  return addressOf(grantSetDoc(addresses));
}

// The address of the empty grant set (no members).
const EMPTY_GRANT_SET: Digest = grantsId([]);

/** The address of `{}`: the `grants_id` of a run given no grant set (sandbox-attest §4.3). */
export const NO_GRANT_SET: Digest = addressOf({});

/**
 * isUngoverned reports whether a run's `grants_id` names no grant (§4.1, sandbox-attest §4.3): the
 * address of `{}` (no grant set given) or that of the empty grant set. Such a run holds no authority.
 */
export function isUngoverned(id: Digest): boolean {
  return id === NO_GRANT_SET || id === EMPTY_GRANT_SET;
}

/**
 * checkGrantSetDoc checks a received grant-set document (§4.1): exactly `type` and `grants`, the
 * right type, members strictly ascending digests (`BadGrantSet`). Returns its `grants_id`.
 */
export function checkGrantSetDoc(v: unknown): Digest {
  const o = v as Record<string, unknown> | null;
  if (
    typeof o !== "object" ||
    o === null ||
    Array.isArray(o) ||
    Object.keys(o).sort().join(",") !== "grants,type"
  )
    throw new JcpError("BadGrantSet", "a grant set is {type, grants}");
  if (o.type !== GRANT_SET_TYPE || !Array.isArray(o.grants))
    throw new JcpError("BadGrantSet", `type must be ${GRANT_SET_TYPE} and grants a list`);
  const doc = grantSetDoc(o.grants as unknown[]);
  if (!isSortedSet(o.grants as string[]))
    throw new JcpError("BadGrantSet", "grants must be in ascending order");
  return addressOf(doc);
}
