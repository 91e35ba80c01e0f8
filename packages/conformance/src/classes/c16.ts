// C16: chain verification (jcp §4.4). The standard chain and its prefixes verify; then it is broken
// systematically: each grant's payload and signature bits, each link dropped, swapped, duplicated,
// re-signed by the wrong key, re-pointed, and the root replaced by an untrusted one.
import { payloadOf, type Envelope, type Json, type JsonObject } from "@sbx/wire";
import { errCase, flipBase64Byte, okCase } from "../generate/build.ts";
import type { ConformanceClass, Vector } from "../types.ts";
import {
  ALICE,
  BOB,
  childPayload,
  CAROL,
  expected,
  MALLORY,
  ROOT,
  rootPayload,
  sign,
  standardChain,
  verifyInput,
} from "./grants/fixtures.ts";
import { chainVerify } from "./grants/ops.ts";

const C = "C16" as const;
const verifyErr = (
  id: string,
  desc: string,
  chain: readonly unknown[],
  code: string,
  extra: JsonObject = {},
) => errCase(C, `c16-${id}`, desc, "chain.verify", verifyInput(chain as Envelope[], undefined, extra), code);

function validVectors(chain: Envelope[]): Vector[] {
  return [1, 2, 3].map((n) =>
    okCase(
      C,
      `c16-valid-${n}`,
      `the standard chain's first ${n} grant(s) verify`,
      "chain.verify",
      verifyInput(chain.slice(0, n)),
      expected(chain.slice(0, n)),
    ),
  );
}

function bitVectors(chain: Envelope[]): Vector[] {
  const out: Vector[] = [];
  chain.forEach((e, i) => {
    const n = Buffer.from(e.payload, "base64").length;
    for (const b of [0, n >> 2, n >> 1, n - 1]) {
      const broken = chain.map((x, j) => (j === i ? { ...x, payload: flipBase64Byte(x.payload, b) } : x));
      out.push(
        verifyErr(`g${i}-payload-bit-${b}`, `grant ${i}: payload byte ${b} flipped`, broken, "BadSignature"),
      );
    }
    for (const b of [0, 63]) {
      const s = e.signatures[0]!;
      const broken = chain.map((x, j) =>
        j === i ? { ...x, signatures: [{ keyid: s.keyid, sig: flipBase64Byte(s.sig, b) }] } : x,
      );
      out.push(
        verifyErr(`g${i}-sig-bit-${b}`, `grant ${i}: signature byte ${b} flipped`, broken, "BadSignature"),
      );
    }
  });
  return out;
}

function linkVectors(chain: Envelope[]): Vector[] {
  const [r, b, c] = chain as [Envelope, Envelope, Envelope];
  const sibling = sign(childPayload(r, ALICE, BOB, "sibling"), ALICE);
  const bPayload = payloadOf(b) as JsonObject;
  const bAltered = sign({ ...bPayload, budget: { uj: "1999999" } }, ALICE);
  return [
    verifyErr("empty", "an empty chain", [], "BrokenChain"),
    verifyErr("drop-root", "the root left out", [b, c], "BrokenChain"),
    verifyErr("drop-middle", "the middle grant left out", [r, c], "BrokenChain"),
    verifyErr("swap", "two links swapped", [r, c, b], "BrokenChain"),
    verifyErr("root-twice", "the root again after the root", [r, r, b], "BrokenChain"),
    verifyErr(
      "second-root",
      "a root in the middle of a chain",
      [r, sign(rootPayload({ holder: BOB.did }), ROOT), c],
      "BrokenChain",
    ),
    verifyErr("sibling-parent", "the leaf under a sibling of its parent", [r, sibling, c], "BrokenChain"),
    verifyErr(
      "parent-altered",
      "the middle grant changed and re-signed by its issuer: its child no longer links",
      [r, bAltered, c],
      "BrokenChain",
    ),
    verifyErr(
      "issuer-not-holder",
      "a child issued by mallory, who does not hold the parent",
      [r, sign({ ...bPayload, issuer: MALLORY.did }, MALLORY)],
      "BrokenChain",
    ),
    verifyErr(
      "issuer-forged",
      "a child naming alice as issuer, signed by mallory",
      [r, sign(bPayload, MALLORY)],
      "BadSignature",
    ),
    verifyErr(
      "holder-skipped",
      "carol issues under bob's grant",
      [r, b, sign({ ...(payloadOf(c) as JsonObject), issuer: CAROL.did }, CAROL)],
      "BrokenChain",
    ),
  ];
}

function rootVectors(chain: Envelope[]): Vector[] {
  const [r, b] = chain as [Envelope, Envelope];
  const mallorysRoot = sign({ ...(payloadOf(r) as JsonObject), issuer: MALLORY.did }, MALLORY);
  return [
    verifyErr("untrusted-root", "the root issuer is not among the trusted roots", chain, "UntrustedRoot", {
      roots: [MALLORY.did],
    }),
    verifyErr("self-made-root", "mallory's own root, same contents", [mallorysRoot, b], "UntrustedRoot"),
    verifyErr(
      "untrusted-before-links",
      "untrusted root and a broken link: the root is refused first",
      [mallorysRoot, chain[2]!],
      "UntrustedRoot",
    ),
    verifyErr("no-roots", "no trusted roots at all", chain, "UntrustedRoot", { roots: [] }),
  ];
}

function envelopeVectors(chain: Envelope[]): Vector[] {
  const [r, b, c] = chain as [Envelope, Envelope, Envelope];
  const junk: Json = { payloadType: b.payloadType, payload: b.payload };
  return [
    verifyErr(
      "wrong-type",
      "a grant with another payload type",
      [r, { ...b, payloadType: "application/vnd.jcp.spend+json" }, c],
      "WrongPayloadType",
    ),
    verifyErr("not-envelope", "an envelope without signatures member", [r, junk, c], "BadEnvelope"),
    verifyErr(
      "co-signed",
      "a grant with a second signature",
      [r, { ...b, signatures: [b.signatures[0]!, c.signatures[0]!] }, c],
      "BadSignature",
    ),
  ];
}

function vectors(): Vector[] {
  const chain = standardChain();
  return [
    ...validVectors(chain),
    ...bitVectors(chain),
    ...linkVectors(chain),
    ...rootVectors(chain),
    ...envelopeVectors(chain),
  ];
}

export const klass: ConformanceClass = {
  id: C,
  title: "chain verification",
  file: "grants.json",
  ops: { "chain.verify": chainVerify },
  generate: vectors,
};
