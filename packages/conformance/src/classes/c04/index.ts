// C4: replay journals (sandbox-attest §8) and the RFC 9162 Merkle trees under them (§8.1).
// Valid cases come from fixed events; broken ones break them systematically (index ±1, size ×2
// and ÷2, one bit flipped in each path element, an element removed or added, each event member
// altered, events reordered), with the expected code stated here.
import { fromHex, toHex, type Json } from "@sbx/wire";
import {
  Journal,
  verifyEventInclusion,
  verifyJournal,
  verifyJournalConsistency,
} from "@sbx/sandbox-attest/journal";
import {
  rootOf,
  sha256Hasher,
  verifyConsistencyProof,
  verifyInclusionProof,
} from "@sbx/sandbox-attest/merkle";
import type { ConformanceClass, Handler } from "../../types.ts";
import { list, obj, str } from "../input.ts";
import { J } from "./fixture.ts";
import { headVectors, verifyVectors } from "./journal.ts";
import { consistencyVectors, inclusionVectors } from "./proofs.ts";
import { sha256Vectors } from "./sha256.ts";

const C = "C4" as const;

const hex = (v: Json | undefined): Uint8Array => fromHex(str(v, "hex text"));
const hexList = (v: Json | undefined): Uint8Array[] => list(v).map(hex);

const ops: Record<string, Handler> = {
  "journal.head": (i) => ({ head: J(Journal.from(list(obj(i).events)).head()) }),
  "journal.prove": (i) => {
    const events = list(obj(i).events);
    const index = obj(i).index;
    // §11.3: an index with no leaf behind it is refused with a code, never an uncoded failure.
    if (typeof index !== "number" || !Number.isSafeInteger(index) || index < 0 || index >= events.length)
      throw Object.assign(new Error(`no event ${JSON.stringify(index)} to prove`), {
        code: "InclusionProofInvalid",
      });
    return { proof: J(Journal.from(events).prove(index)) };
  },
  "journal.verify": (i) => (verifyJournal(list(obj(i).events), obj(i).head), null),
  "journal.verify_inclusion": (i) => (verifyEventInclusion(obj(i).head, obj(i).event, obj(i).proof), null),
  "journal.verify_consistency": (i) => (
    verifyJournalConsistency(obj(i).older, obj(i).newer, obj(i).path),
    null
  ),
  "merkle.sha256.root": (i) => ({
    root: toHex(
      rootOf(
        sha256Hasher,
        hexList(obj(i).leaves).map((d) => sha256Hasher.leaf(d)),
      ),
    ),
  }),
  "merkle.sha256.verify_inclusion": (i) => {
    const o = obj(i);
    verifyInclusionProof(
      sha256Hasher,
      { size: Number(o.size), root: hex(o.root) },
      Number(o.index),
      hex(o.leaf_hash),
      hexList(o.path),
    );
    return null;
  },
  "merkle.sha256.verify_consistency": (i) => {
    const o = obj(i);
    const older = { size: Number(o.size1), root: hex(o.root1) };
    verifyConsistencyProof(
      sha256Hasher,
      older,
      { size: Number(o.size2), root: hex(o.root2) },
      hexList(o.path),
    );
    return null;
  },
};

export const klass: ConformanceClass = {
  id: C,
  title: "replay journals and their Merkle trees",
  file: "core.json",
  ops,
  generate: () => [
    ...headVectors(),
    ...verifyVectors(),
    ...inclusionVectors(),
    ...consistencyVectors(),
    ...sha256Vectors(),
  ],
};
