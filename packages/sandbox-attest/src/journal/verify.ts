// §8.4 Checking a journal against its tree head, one event against a head by inclusion proof,
// and a later head against an earlier one by consistency proof. A head is always {size, root}.
import { isDigest, parseDigest, type Json } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import {
  blake3Hasher,
  parseTreeHead,
  verifyConsistencyProof,
  verifyInclusionProof,
} from "../merkle/index.ts";
import { parseEvent } from "./events.ts";
import { eventLeaf, Journal } from "./journal.ts";

/**
 * verifyJournal checks a full event list against a tree head (§8.4). Refuses BadTreeHead for a
 * malformed head, any code Journal.from refuses, and JournalRootMismatch when the events' size or
 * root differs from the head's.
 */
export function verifyJournal(events: readonly Json[], head: Json | undefined): void {
  const want = parseTreeHead(head);
  const got = Journal.from(events).head();
  if (got.size !== want.size || !blake3Hasher.equal(parseDigest(got.root), want.root))
    throw new SandboxAttestError(
      "JournalRootMismatch",
      `events give ${got.size} / ${got.root}, the head says otherwise`,
    );
}

/** parsePath reads an audit path: an array of digests; anything else is InclusionProofInvalid or `code`. */
function parsePath(
  path: Json | undefined,
  code: "InclusionProofInvalid" | "ConsistencyProofInvalid",
): Uint8Array[] {
  if (!Array.isArray(path) || !path.every(isDigest))
    throw new SandboxAttestError(code, "a proof path is an array of digests");
  return path.map((d) => parseDigest(d));
}

/**
 * verifyEventInclusion checks that `event` is event number `proof.index` of the journal whose
 * head is `head` (§8.4). Refuses BadTreeHead for a malformed head, the codes of parseEvent for a
 * malformed event, and InclusionProofInvalid for a malformed proof, an index that is not the
 * event's `seq`, or a proof that does not lead to the head's root at the head's size.
 */
export function verifyEventInclusion(
  head: Json | undefined,
  event: Json | undefined,
  proof: Json | undefined,
): void {
  const h = parseTreeHead(head);
  const e = parseEvent(event);
  if (
    typeof proof !== "object" ||
    proof === null ||
    Array.isArray(proof) ||
    Object.keys(proof).sort().join(",") !== "index,path"
  )
    throw new SandboxAttestError("InclusionProofInvalid", "an event proof is exactly {index, path}");
  const { index } = proof;
  if (typeof index !== "number" || !Number.isSafeInteger(index) || index < 0)
    throw new SandboxAttestError("InclusionProofInvalid", "index must be a non-negative integer");
  if (index !== e.seq)
    throw new SandboxAttestError(
      "InclusionProofInvalid",
      `proof index ${index} is not the event's seq ${e.seq}`,
    );
  verifyInclusionProof(blake3Hasher, h, index, eventLeaf(e), parsePath(proof.path, "InclusionProofInvalid"));
}

/**
 * verifyJournalConsistency checks that the journal with head `older` is a prefix of the journal
 * with head `newer` (§8.4, RFC 9162 §2.1.4.2). Refuses BadTreeHead for a malformed head and
 * ConsistencyProofInvalid otherwise (including an older head of size 0).
 */
export function verifyJournalConsistency(
  older: Json | undefined,
  newer: Json | undefined,
  path: Json | undefined,
): void {
  const [a, b] = [parseTreeHead(older), parseTreeHead(newer)];
  verifyConsistencyProof(blake3Hasher, a, b, parsePath(path, "ConsistencyProofInvalid"));
}
