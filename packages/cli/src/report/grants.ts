// The grant chain of a run, as the page verifies it (issue 19; jcp §4.1, §4.4): the grant-set
// document at the record's `grants_id` (checkGrantSetDoc, and its address), then each member's chain
// from the embedded grant envelopes (chainFromStore, resolveChain: every signature, every link,
// every child inside its parent). Budget from the verified leaf, spent = the run's verified energy,
// remaining = budget − spent. Not part of `sbx verify`'s checks, so its verdict is shown on its own
// and does not change the run's.
import { isWireError, parseCanonical, type Digest, type Envelope } from "@sbx/wire";
import {
  chainFromStore,
  checkGrantSetDoc,
  GRANT_PAYLOAD_TYPE,
  grantStore,
  isJcpError,
  isUngoverned,
  JcpError,
  resolveChain,
  type EffectiveGrant,
} from "@sbx/jcp-grant/grant";
import { isSandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { checkObject } from "@sbx/sandbox-attest/store";
import { unb64, type RunBundle } from "./bundle.ts";

/** What the page and `sbx show` say of a run whose grants_id names no grant (jcp §4.1). */
export const NO_GRANTS = "no grants: this run was not governed by a grant";

/** One member of the grant set: its chain (root first) or the refusal, and the budget figures. */
export interface GrantView {
  readonly address: Digest;
  readonly chain: readonly EffectiveGrant[];
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly budget_uj: string | null;
  readonly spent_uj: string | null;
  readonly remaining_uj: string | null;
}

/**
 * The page's view of the run's grants: `none` when the run names no grant (its `grants_id` is the
 * address of `{}` or of the empty grant set: it was not governed by a grant, which is no fault);
 * `present` false when the writer embedded no grant set.
 */
export interface GrantsCheck {
  readonly none: boolean;
  readonly present: boolean;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly grants: readonly GrantView[];
}

function refusal(e: unknown): { code: string; message: string } {
  if (!isWireError(e) && !isJcpError(e) && !isSandboxAttestError(e)) throw e;
  return { code: e.code, message: e.reason };
}

function envelopes(b: RunBundle): Envelope[] {
  const out: Envelope[] = [];
  for (const text of Object.values(b.signed)) {
    const bytes = unb64(text);
    if (bytes === null) continue;
    try {
      const env = parseCanonical(bytes) as unknown as Envelope;
      if ((env as { payloadType?: unknown }).payloadType === GRANT_PAYLOAD_TYPE) out.push(env);
    } catch {
      // not a grant: the run's own checks judge it
    }
  }
  return out;
}

function viewOf(address: Digest, store: Map<Digest, Envelope>, spent: string | null): GrantView {
  try {
    const chain = resolveChain(chainFromStore(address, store));
    const leaf = chain[chain.length - 1]!;
    const budget = leaf.budget.uj;
    const used = spent === null ? null : BigInt(spent);
    const over = used !== null && used > budget;
    return {
      address,
      chain,
      error: over
        ? { code: "Overspend", message: `the run used ${spent} µJ of a ${budget} µJ budget` }
        : null,
      budget_uj: String(budget),
      spent_uj: spent,
      remaining_uj: used === null || over ? null : String(budget - used),
    };
  } catch (e) {
    return { address, chain: [], error: refusal(e), budget_uj: null, spent_uj: spent, remaining_uj: null };
  }
}

/**
 * checkGrants verifies the embedded grant set of a run whose record binds `grantsId`; `spent` is the
 * run's verified total energy (null when the run does not verify).
 */
export function checkGrants(b: RunBundle, grantsId: Digest, spent: string | null): GrantsCheck {
  if (isUngoverned(grantsId)) return { none: true, present: false, error: null, grants: [] };
  const text = b.objects[grantsId];
  if (text === undefined) return { none: false, present: false, error: null, grants: [] };
  try {
    const bytes = unb64(text);
    if (bytes === null) throw new JcpError("BadGrantSet", "the grant set is not base64");
    checkObject(grantsId, bytes);
    const doc = parseCanonical(bytes) as { grants: Digest[] };
    if (checkGrantSetDoc(doc) !== grantsId)
      throw new JcpError("BadGrantSet", "the grant set is not at grants_id");
    const store = grantStore(envelopes(b));
    return {
      none: false,
      present: true,
      error: null,
      grants: doc.grants.map((g) => viewOf(g, store, spent)),
    };
  } catch (e) {
    return { none: false, present: true, error: refusal(e), grants: [] };
  }
}
