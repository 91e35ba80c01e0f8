// §4.1, §4.4 Making grants: a root signed by a trusted issuer, and children made only by attenuation,
// checked against the parent's effective grant before they are signed.
import { addressOf, signPayload, toHex, type Amount, type Envelope, type KeyPair } from "@sbx/wire";
import { JcpError } from "../errors.ts";
import { assertChildOf } from "./contain.ts";
import {
  checkGrantPayload,
  resolveGrant,
  type BudgetFields,
  type GrantPayload,
  type MintCitation,
  type ScopeFields,
} from "./grant.ts";
import { GRANT_PAYLOAD_TYPE } from "./limits.ts";
import { resolveChain, type ResolveOptions } from "./verify.ts";

/** What a root grant states (§4.1). `calls` and `wall_ms` left out are unlimited. */
export interface RootFields {
  readonly holder: string;
  readonly resources: readonly string[];
  readonly actions: readonly string[];
  readonly uj: Amount;
  readonly calls?: number;
  readonly wall_ms?: number;
  readonly nbf_ms?: number;
  readonly exp_ms: number;
  readonly depth: number;
  /** 32 lowercase hex digits; random when left out. */
  readonly nonce?: string;
}

/** What a child states (§4.4); anything left out inherits from the parent, exp_ms included. */
export interface ChildFields {
  readonly holder: string;
  readonly resources?: readonly string[];
  readonly actions?: readonly string[];
  readonly uj?: Amount;
  readonly calls?: number;
  readonly wall_ms?: number;
  readonly nbf_ms?: number;
  readonly exp_ms?: number;
  readonly depth?: number;
  readonly nonce?: string;
  /** For a child minted under a standing grant (§4.6): the policy and event it cites. */
  readonly mint?: MintCitation;
}

/** randomNonce returns 128 random bits as 32 lowercase hex digits. */
export function randomNonce(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(16)));
}

function scopeFields(f: {
  readonly resources?: readonly string[];
  readonly actions?: readonly string[];
}): ScopeFields | undefined {
  const s = {
    ...(f.resources ? { resources: [...f.resources] } : {}),
    ...(f.actions ? { actions: [...f.actions] } : {}),
  };
  return Object.keys(s).length ? s : undefined;
}

function budgetFields(f: {
  readonly uj?: Amount;
  readonly calls?: number;
  readonly wall_ms?: number;
}): BudgetFields | undefined {
  const b = {
    ...(f.uj !== undefined ? { uj: f.uj } : {}),
    ...(f.calls !== undefined ? { calls: f.calls } : {}),
    ...(f.wall_ms !== undefined ? { wall_ms: f.wall_ms } : {}),
  };
  return Object.keys(b).length ? b : undefined;
}

function payloadOf(
  base: Pick<GrantPayload, "issuer" | "holder" | "parent" | "exp_ms">,
  f: ChildFields,
): GrantPayload {
  const scope = scopeFields(f);
  const budget = budgetFields(f);
  return {
    ...base,
    ...(scope ? { scope } : {}),
    ...(budget ? { budget } : {}),
    ...(f.nbf_ms !== undefined ? { nbf_ms: f.nbf_ms } : {}),
    ...(f.depth !== undefined ? { depth: f.depth } : {}),
    nonce: f.nonce ?? randomNonce(),
    ...(f.mint ? { mint: { policy: f.mint.policy, event: f.mint.event } } : {}),
  };
}

/**
 * issueGrant signs a root grant from `issuer` to `fields.holder` (§4.1). Refuses a payload that
 * fails the grant form (`BadGrant`, `BadPattern`) or has an empty window (`BadGrant`).
 */
export function issueGrant(issuer: KeyPair, fields: RootFields): Envelope {
  const payload = checkGrantPayload(
    payloadOf({ issuer: issuer.did, holder: fields.holder, parent: null, exp_ms: fields.exp_ms }, fields),
  );
  const g = resolveGrant(payload, addressOf(payload), null);
  if (g.nbf_ms >= g.exp_ms) throw new JcpError("BadGrant", "the root's window is empty");
  return signPayload(GRANT_PAYLOAD_TYPE, payload, issuer);
}

/**
 * attenuate signs a child of the last grant of `parentChain` (root first) by `holder`, the parent's
 * holder (§4.4). The parent chain is resolved first (resolveChain's codes); then refuses a signer
 * that is not the parent's holder (`NotHolder`) and a child not inside the parent's effective grant
 * (`DepthExhausted`, `ScopeWidens`, `BudgetExceeds`, `WindowWidens`), as verification would.
 */
export function attenuate(
  parentChain: readonly unknown[],
  holder: KeyPair,
  fields: ChildFields,
  opts: ResolveOptions = {},
): Envelope {
  const chain = resolveChain(parentChain, opts);
  const parent = chain[chain.length - 1]!;
  if (holder.did !== parent.holder)
    throw new JcpError("NotHolder", `${holder.did} does not hold ${parent.address}`);
  if (parent.depth === 0)
    throw new JcpError("DepthExhausted", `${parent.address} has depth 0 and cannot delegate`);
  const base = {
    issuer: holder.did,
    holder: fields.holder,
    parent: parent.address,
    exp_ms: fields.exp_ms ?? parent.exp_ms,
  };
  const payload = checkGrantPayload(payloadOf(base, fields));
  assertChildOf(resolveGrant(payload, addressOf(payload), parent), parent);
  return signPayload(GRANT_PAYLOAD_TYPE, payload, holder);
}
