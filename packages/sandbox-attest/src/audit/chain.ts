// §7.7 The audit chain: the attestations of one steward's domain, each citing the address of the
// one before it (`audit_prev`) and stating its position (`audit_seq`). The first cites the domain's
// genesis head, so a chain cannot be moved into another domain. An attestation's address commits to
// its `audit_prev`, so each address is the chain's head after it.
import { addressOf, chainGenesis, isDidKey, payloadOf, type Digest, type Envelope } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { parseStatement } from "../attestation/statement.ts";
import { attestationAddress } from "../attestation/sign.ts";

/** The audit chain's tag (§7.7, §2.7 chain form). */
export const AUDIT_TAG = "sandbox.audit/1";

/** The link an attestation carries in its predicate (§7.7). */
export interface AuditLink {
  readonly audit_prev: Digest;
  readonly audit_seq: number;
}

/** stewardDomain returns the id of the steward's audit domain: the address of {"steward": did} (§7.7). */
export function stewardDomain(stewardDid: string): Digest {
  if (!isDidKey(stewardDid)) throw new TypeError("stewardDomain: stewardDid must be an Ed25519 did:key");
  return addressOf({ steward: stewardDid });
}

/** auditGenesis returns head₀ = BLAKE3("sandbox.audit/1" ‖ domain) (§7.7). */
export function auditGenesis(domain: Digest): Digest {
  return chainGenesis(AUDIT_TAG, [domain]);
}

/** firstLink returns the link of a domain's first attestation: genesis, position 1 (§7.7). */
export function firstLink(domain: Digest): AuditLink {
  return { audit_prev: auditGenesis(domain), audit_seq: 1 };
}

/**
 * linkAfter returns the link of the attestation that follows `prev` in its domain (§7.7): its
 * address and the next position. Does not verify the signature (the caller made or verified it);
 * refuses a malformed statement (`BadStatement`, `BadPredicate`) and one with no link (`AuditUnlinked`).
 */
export function linkAfter(prev: Envelope): AuditLink {
  const p = parseStatement(payloadOf(prev)).predicate;
  if (p.audit_seq === undefined)
    throw new SandboxAttestError("AuditUnlinked", "previous attestation carries no audit link");
  return { audit_prev: attestationAddress(prev), audit_seq: p.audit_seq + 1 };
}
