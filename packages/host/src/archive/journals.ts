// §13.13 with §13.7.3: the journals of a run travel in its archive as the nodes of their trees. For
// each executed segment, the journal whose tree head its attestation signs is walked down from that
// root (readStoredJournal: every node checked against its address, its shape against the head's
// size, the events as §8.2–§8.3 check them); a journal whose root is not held was not kept and is
// simply absent. Export adds the nodes it walked in the exporting store; import walks them in the
// archive before anything is written, so a journal is imported whole and verified or not at all.
import type { Digest, Envelope } from "@sbx/wire";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { readStoredJournal } from "@sbx/sandbox-attest/journal";
import type { RunRecord } from "@sbx/sandbox-attest/runrecord";

/**
 * journalNodesOf returns the journal nodes of every executed segment of `record` that `get` holds,
 * by address (first seen first). A journal whose root `get` lacks is skipped; any other failure of
 * the walk is thrown with its code (ObjectMismatch, ObjectMissing, JournalRootMismatch, §8 codes).
 */
export function journalNodesOf(
  record: RunRecord,
  getSigned: (a: Digest) => Envelope | null,
  get: (a: Digest) => Uint8Array | null,
): Map<Digest, Uint8Array> {
  const nodes = new Map<Digest, Uint8Array>();
  for (const seg of record.segments) {
    if (seg.kind !== "executed") continue;
    const env = getSigned(seg.attestation);
    if (env === null) continue; // verifyRun already reported it missing
    const { journal } = verifyAttestation(env).predicate;
    readStoredJournal({ root: journal.root, size: journal.events }, (a) => {
      const b = get(a);
      if (b !== null) nodes.set(a, b);
      return b;
    });
  }
  return nodes;
}
