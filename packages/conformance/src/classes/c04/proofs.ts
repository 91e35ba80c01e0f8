// C4 vectors on proofs: one event's inclusion and a journal's growth, each broken systematically.
import type { Json } from "@sbx/wire";
import { errCase, flipHexByte, okCase } from "../../generate/build.ts";
import type { Vector } from "../../types.ts";
import { alter, eventsOf, J, journal } from "./fixture.ts";

const C = "C4" as const;

/** Breaks of one inclusion proof, as the transparency-dev generator breaks them. */
export function inclusionVectors(): Vector[] {
  const evs3 = eventsOf(journal(3));
  // §11.3: journal.prove refuses an index with no event behind it.
  const out: Vector[] = (
    [
      ["past-end", "index 3 of 3 events", evs3, 3],
      ["negative", "index −1", evs3, -1],
      ["empty", "index 0 of no events", [], 0],
    ] as [string, string, Json[], number][]
  ).map(([id, desc, events, index]) =>
    errCase(
      C,
      `c4-prove-${id}`,
      `no such event: ${desc}`,
      "journal.prove",
      { events, index },
      "InclusionProofInvalid",
    ),
  );
  for (const [n, i] of [
    [11, 0],
    [11, 5],
    [11, 10],
    [8, 3],
    [1, 0],
  ] as const) {
    const j = journal(n);
    const evs = eventsOf(j);
    const head = j.head();
    const proof = j.prove(i);
    const id = `c4-incl-${n}-${i}`;
    const at = (h: Json, e: Json, p: Json) => ({ head: h, event: e, proof: p });
    out.push(
      okCase(
        C,
        `${id}-prove`,
        `inclusion proof of event ${i} of ${n}`,
        "journal.prove",
        { events: evs, index: i },
        { proof: J(proof) },
      ),
    );
    out.push(
      okCase(
        C,
        `${id}-ok`,
        `event ${i} of ${n} verifies`,
        "journal.verify_inclusion",
        at(J(head), evs[i]!, J(proof)),
        null,
      ),
    );
    const refuse = (tag: string, desc: string, input: Json, code = "InclusionProofInvalid") =>
      out.push(errCase(C, `${id}-${tag}`, desc, "journal.verify_inclusion", input, code));
    if (i > 0) refuse("index-minus-1", "index − 1", at(J(head), evs[i]!, J({ ...proof, index: i - 1 })));
    refuse("index-plus-1", "index + 1", at(J(head), evs[i]!, J({ ...proof, index: i + 1 })));
    refuse("size-x2", "head size × 2", at(J({ ...head, size: n * 2 }), evs[i]!, J(proof)));
    if (n > 1)
      refuse("size-div2", "head size ÷ 2", at(J({ ...head, size: Math.floor(n / 2) }), evs[i]!, J(proof)));
    proof.path.forEach((el, k) => {
      for (const byte of [0, 31])
        refuse(
          `path-${k}-bit-${byte}`,
          `path element ${k}: byte ${byte} flipped`,
          at(
            J(head),
            evs[i]!,
            J({
              ...proof,
              path: proof.path.map((x, m) => (m === k ? "blake3:" + flipHexByte(el.slice(7), byte) : x)),
            }),
          ),
        );
      refuse(
        `path-${k}-removed`,
        `path element ${k} removed`,
        at(J(head), evs[i]!, J({ ...proof, path: proof.path.filter((_, m) => m !== k) })),
      );
    });
    refuse(
      "path-added-end",
      "an element added after the path",
      at(J(head), evs[i]!, J({ ...proof, path: [...proof.path, head.root] })),
    );
    refuse(
      "path-added-start",
      "an element added before the path",
      at(J(head), evs[i]!, J({ ...proof, path: [head.root, ...proof.path] })),
    );
    refuse(
      "root-flipped",
      "head root: one bit flipped",
      at(J({ ...head, root: "blake3:" + flipHexByte(head.root.slice(7), 0) }), evs[i]!, J(proof)),
    );
    for (const [m, v] of Object.entries(evs[i]!)) {
      const w = alter(m, v);
      if (w !== undefined)
        refuse(
          `event-${m}-altered`,
          `event member ${m} changed`,
          at(J(head), { ...evs[i]!, [m]: w }, J(proof)),
        );
    }
    if (n > 1)
      refuse(
        "other-event",
        "the neighbouring event with this proof",
        at(J(head), { ...evs[(i + 1) % n]!, seq: i }, J(proof)),
      );
    refuse(
      "root-alone",
      "a head that is a root alone",
      at(J({ root: head.root }), evs[i]!, J(proof)),
      "BadTreeHead",
    );
    refuse("proof-no-index", "a proof without its index", at(J(head), evs[i]!, J({ path: proof.path })));
  }
  return out;
}

export function consistencyVectors(): Vector[] {
  const j = journal();
  const out: Vector[] = [];
  const input = (m: number, path: readonly string[]) => ({
    older: J(j.head(m)),
    newer: J(j.head()),
    path: [...path],
  });
  for (const m of [1, 4, 7, 11]) {
    const path = j.proveConsistency(m);
    out.push(
      okCase(
        C,
        `c4-cons-${m}-ok`,
        `journal of ${m} events is a prefix of the journal of 11`,
        "journal.verify_consistency",
        input(m, path),
        null,
      ),
    );
    path.forEach((el, k) => {
      out.push(
        errCase(
          C,
          `c4-cons-${m}-path-${k}-bit`,
          `path element ${k} flipped`,
          "journal.verify_consistency",
          input(
            m,
            path.map((x, n) => (n === k ? "blake3:" + flipHexByte(el.slice(7), 5) : x)),
          ),
          "ConsistencyProofInvalid",
        ),
      );
      out.push(
        errCase(
          C,
          `c4-cons-${m}-path-${k}-removed`,
          `path element ${k} removed`,
          "journal.verify_consistency",
          input(
            m,
            path.filter((_, n) => n !== k),
          ),
          "ConsistencyProofInvalid",
        ),
      );
    });
    out.push(
      errCase(
        C,
        `c4-cons-${m}-path-added`,
        "an element added",
        "journal.verify_consistency",
        input(m, [...path, j.head().root]),
        "ConsistencyProofInvalid",
      ),
    );
  }
  out.push(
    errCase(
      C,
      "c4-cons-swapped",
      "newer and older swapped",
      "journal.verify_consistency",
      { older: J(j.head()), newer: J(j.head(4)), path: j.proveConsistency(4) },
      "ConsistencyProofInvalid",
    ),
  );
  out.push(
    errCase(
      C,
      "c4-cons-from-empty",
      "no proof is defined from the empty journal",
      "journal.verify_consistency",
      input(0, []),
      "ConsistencyProofInvalid",
    ),
  );
  return out;
}
