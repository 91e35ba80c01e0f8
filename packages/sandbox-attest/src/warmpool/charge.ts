// §15.4 A claim's joule price: every component the claimed item drew, relabelled to the `warmpool`
// domain and tied to the claim entry by `ref`, goes into the claiming run's first energy receipt.
import { addressOf, canonicalize, formatAmount, type Digest } from "@sbx/wire";
import type { EnergyComponent, EnergyReceipt } from "../energy/types.ts";
import { assertReceipt } from "../energy/receipt.ts";
import { energyGenesis } from "../energy/chain.ts";
import { SandboxAttestError } from "../errors.ts";
import type { LedgerState } from "./ledger.ts";
import type { ClaimedEntry } from "./types.ts";
import { figureUj } from "./figure.ts";

/** claimAddress returns the content address of a claim entry, the `ref` its components carry (§15.4). */
export function claimAddress(claim: ClaimedEntry): Digest {
  return addressOf(claim);
}

/** claimByAddress returns the claim entry of ledger `s` whose address is `ref` (§15.4); refuses `UnknownItem`. */
export function claimByAddress(s: LedgerState, ref: string): ClaimedEntry {
  const claim = s.payloads.find((e): e is ClaimedEntry => e.kind === "claimed" && addressOf(e) === ref);
  if (!claim) throw new SandboxAttestError("UnknownItem", `no claim ${ref} in this ledger`);
  return claim;
}

/**
 * claimComponents returns the `warmpool` components a claim puts into the claiming run's first
 * receipt (§15.4): the item's provisioning and every residency component, each keeping its own
 * provenance and model, with domain `warmpool` and `ref` the claim's address. Their sum is the
 * claim's accrued_uj. Refuses `UnknownItem` when `claim` is not a claim entry of this ledger.
 */
export function claimComponents(s: LedgerState, claim: ClaimedEntry): EnergyComponent[] {
  const ref = claimAddress(claim);
  if (!s.payloads.some((e) => e.kind === "claimed" && addressOf(e) === ref))
    throw new SandboxAttestError("UnknownItem", `no claim ${ref} in this ledger`);
  const out: EnergyComponent[] = [];
  for (const e of s.payloads)
    if (e.kind === "provisioned" && e.item === claim.item)
      out.push(...e.provision.map((c) => ({ ...c, domain: "warmpool" as const, ref })));
    else if (e.kind === "accrued" && e.item === claim.item)
      out.push(...e.residency.map((c) => ({ ...c, domain: "warmpool" as const, ref })));
  if (formatAmount(figureUj(out)) !== claim.accrued_uj)
    throw new SandboxAttestError(
      "AccruedMismatch",
      `components sum to ${figureUj(out)}, claim states ${claim.accrued_uj}`,
    );
  return out;
}

/**
 * checkClaimCharged checks that `receipt` charges `claim` of the verified ledger `s` (§15.4): the
 * receipt is well formed (§6.1 codes), `claim` is a claim entry of the ledger (`UnknownItem`), the
 * receipt is the claiming run's first (same unit_id and grants_id, seq 0), and its `warmpool`
 * components whose `ref` is the claim's address are, in order, exactly the copies claimComponents
 * gives: every provisioning and accrual component of the item, each member equal but `domain` and
 * `ref`. Comparing only their sum would let one `measured` figure stand in for several estimated ones
 * (provenance laundering). Refuses `ClaimNotCharged` for anything but an exact copy.
 */
export function checkClaimCharged(s: LedgerState, claim: ClaimedEntry, receipt: EnergyReceipt): void {
  assertReceiptForm(receipt);
  const want = claimComponents(s, claim);
  if (receipt.unit_id !== claim.unit || receipt.grants_id !== claim.grants)
    throw new SandboxAttestError("ClaimNotCharged", "the receipt is not of the claiming run");
  if (receipt.seq !== 0)
    throw new SandboxAttestError(
      "ClaimNotCharged",
      `the claim is charged in the run's first receipt, not receipt ${receipt.seq}`,
    );
  if (receipt.prev !== energyGenesis(receipt.unit_id, receipt.grants_id))
    throw new SandboxAttestError(
      "ClaimNotCharged",
      "the run's first receipt cites its chain's head₀ as prev (§6.4)",
    );
  const ref = claimAddress(claim);
  const got = receipt.components.filter((c) => c.domain === "warmpool" && c.ref === ref);
  if (got.length !== want.length)
    throw new SandboxAttestError(
      "ClaimNotCharged",
      `receipt carries ${got.length} warmpool components for the claim, want ${want.length}`,
    );
  got.forEach((c, i) => {
    if (canonicalize(c) !== canonicalize(want[i]))
      throw new SandboxAttestError(
        "ClaimNotCharged",
        `warmpool component ${i} is not a copy of the item's component ${i} (${want[i]?.provenance ?? ""} ${want[i]?.uj ?? ""} µJ)`,
      );
  });
}

/**
 * assertReceiptForm checks a receipt payload given as a value (§15.4): first as a protocol object
 * (§2.1: `LoneSurrogate`, `ForbiddenKey`, `UnsafeNumber`, `TooDeep`, in any member, the run's own
 * components included), then its §6.1 item 6 form.
 */
function assertReceiptForm(receipt: unknown): asserts receipt is EnergyReceipt {
  canonicalize(receipt);
  assertReceipt(receipt);
}

/**
 * checkChargeOf checks the charge of the claim entry whose address is `ref` (§15.4, the
 * `warmpool.claim_charged` order): the receipt's form (§2.1, then §6.1 item 6 codes), `ref` a claim
 * entry of the verified ledger `s` (`UnknownItem`), then checkClaimCharged's rules.
 */
export function checkChargeOf(s: LedgerState, ref: string, receipt: unknown): void {
  assertReceiptForm(receipt);
  checkClaimCharged(s, claimByAddress(s, ref), receipt);
}
