// The page's own verification of a fleet (issue 19; sandbox-attest §16): the signed receipt opened
// under the reader's trust (openFleetReceipt), the embedded items rebuilt into the (hash, energy-sum)
// tree, and membership proofs checked against the signed root and total (verifyMembership): the
// functions `sbx fleet verify` and `sbx fleet prove` call.
import { isWireError, parseStrict, type Envelope } from "@sbx/wire";
import {
  buildFleet,
  openFleetReceipt,
  verifyMembership,
  type Fleet,
  type FleetItem,
  type FleetReceipt,
  type MembershipProof,
} from "@sbx/sandbox-attest/fleet";
import { isSandboxAttestError, SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { unb64, type FleetBundle } from "./bundle.ts";

/** A verdict: ok, or the refusal's code and message. */
export type Verdict =
  { readonly ok: true } | { readonly ok: false; readonly code: string; readonly message: string };

/** The page's verdict on a fleet file. */
export interface FleetCheck {
  /** The receipt's verdict (signature under the trust set, shape). */
  readonly receipt: Verdict;
  readonly opened: FleetReceipt | null;
  /** The items' verdict: they rebuild to the signed size, root and total. */
  readonly items: Verdict;
  readonly fleet: Fleet | null;
  readonly list: readonly FleetItem[];
  readonly trusted: boolean;
}

function refusal(e: unknown): Verdict {
  if (!isWireError(e) && !isSandboxAttestError(e)) throw e;
  return { ok: false, code: e.code, message: e.reason };
}

/** verdictOf runs a check and turns a refusal of the project's libraries into a verdict. */
export function verdictOf(fn: () => void): Verdict {
  try {
    fn();
    return { ok: true };
  } catch (e) {
    return refusal(e);
  }
}

/** openReceipt opens a fleet receipt envelope under `trust` (empty: any signer, as --any-signer). */
export function openReceipt(env: unknown, trust: readonly string[]): FleetReceipt {
  return openFleetReceipt(env as Envelope, trust.length > 0 ? trust : undefined);
}

/**
 * checkMembershipJson verifies a membership proof given as JSON text against an opened receipt
 * (§16.4); the text is parsed with the wire's strict parser first (its codes when malformed).
 */
export function checkMembershipJson(r: FleetReceipt, text: string): Verdict {
  return verdictOf(() => verifyMembership(r, parseStrict(text) as unknown as MembershipProof));
}

/** checkFleet opens the embedded fleet file: the receipt under `trust`, then the items against it. */
export function checkFleet(b: FleetBundle, trust: readonly string[]): FleetCheck {
  let file: { receipt?: unknown; items?: unknown };
  try {
    const bytes = unb64(b.fleet);
    if (bytes === null)
      throw new SandboxAttestError("BadFleetReceipt", "the embedded fleet file is not base64");
    file = parseStrict(new TextDecoder().decode(bytes)) as typeof file;
  } catch (e) {
    const v = refusal(e);
    return { receipt: v, opened: null, items: v, fleet: null, list: [], trusted: false };
  }
  let opened: FleetReceipt | null = null;
  const receipt = verdictOf(() => {
    opened = openReceipt(file.receipt, trust);
  });
  let fleet: Fleet | null = null;
  // A bare receipt (no items): proofs are checked against it, and there are no items to rebuild.
  const bare = !("items" in file) && !("receipt" in file);
  if (bare) {
    const receipt = verdictOf(() => {
      opened = openReceipt(file, trust);
    });
    return {
      receipt,
      opened,
      items: { ok: true },
      fleet: null,
      list: [],
      trusted: receipt.ok && trust.length > 0,
    };
  }
  const items = verdictOf(() => {
    fleet = buildFleet(Array.isArray(file.items) ? file.items : []);
    if (opened === null) return;
    if (fleet.size !== opened.size)
      throw new SandboxAttestError("FleetProofSize", `${fleet.size} items, the receipt signs ${opened.size}`);
    if (fleet.size > 0) verifyMembership(opened, fleet.proveMember(0));
  });
  const f = fleet as Fleet | null;
  return { receipt, opened, items, fleet: f, list: f?.items ?? [], trusted: receipt.ok && trust.length > 0 };
}
