// C18: revocation (jcp §4.5). Who may revoke (any issuer at or above the grant), what a revocation
// invalidates (the grant and its descendants, from its time on, nothing else), and the list's
// append-only hash chain broken systematically.
import {
  chainGenesis,
  chainNext,
  payloadOf,
  signPayload,
  type Digest,
  type Envelope,
  type Json,
  type JsonObject,
  type KeyPair,
} from "@sbx/wire";
import { REVOCATION_PAYLOAD_TYPE, REVOCATION_TAG } from "@sbx/jcp-grant/grant";
import { errCase, flipBase64Byte, okCase } from "../generate/build.ts";
import type { ConformanceClass, Vector } from "../types.ts";
import {
  addr,
  ALICE,
  BOB,
  CAROL,
  childPayload,
  DAVE,
  expected,
  MALLORY,
  ROOT,
  rootPayload,
  sign,
  T0,
  verifyInput,
} from "./grants/fixtures.ts";
import { revocationsVerify } from "./grants/ops.ts";

const C = "C18" as const;

function tree() {
  const r = sign(rootPayload(), ROOT);
  const b = sign(childPayload(r, ALICE, BOB, "rev-b"), ALICE);
  const c = sign(childPayload(b, BOB, CAROL, "rev-c"), BOB);
  const d = sign(childPayload(r, ALICE, DAVE, "rev-d"), ALICE);
  return { r, b, c, d };
}

/** list signs revocation entries [target, revoker, at_ms] in order, chaining each after the last. */
function list(entries: [Envelope, KeyPair, number][], extra: JsonObject = {}): Envelope[] {
  let head: Digest = chainGenesis(REVOCATION_TAG, []);
  return entries.map(([target, by, at_ms], i) => {
    const p = { grant: addr(target), by: by.did, seq: i + 1, prev: head, at_ms, ...extra };
    head = chainNext(head, p);
    return signPayload(REVOCATION_PAYLOAD_TYPE, p, by);
  });
}

function useVectors(): Vector[] {
  const { r, b, c, d } = tree();
  const byAlice = list([[b, ALICE, T0 - 10]]);
  const V = (chain: Envelope[], revs: Envelope[], at = T0) =>
    verifyInput(chain, at, { revocations: revs as unknown as Json[] });
  const ok = (id: string, desc: string, chain: Envelope[], revs: Envelope[], at = T0) =>
    okCase(C, `c18-${id}`, desc, "chain.verify", V(chain, revs, at), expected(chain, at));
  const no = (id: string, desc: string, chain: Envelope[], revs: Envelope[]) =>
    errCase(C, `c18-${id}`, desc, "chain.verify", V(chain, revs), "Revoked");
  return [
    no("revoked-grant", "alice revoked bob's grant", [r, b], byAlice),
    no("revoked-descendant", "carol's grant lies below the revoked one", [r, b, c], byAlice),
    ok("sibling-unaffected", "dave's sibling grant is untouched", [r, d], byAlice),
    ok("parent-unaffected", "the root above is untouched", [r], byAlice),
    ok("before-revocation", "verified at a time before the revocation", [r, b, c], byAlice, T0 - 11),
    no(
      "root-revokes-leaf",
      "the root issuer revokes carol's grant two levels down",
      [r, b, c],
      list([[c, ROOT, T0 - 1]]),
    ),
    no("issuer-revokes-own", "bob revokes the grant he issued", [r, b, c], list([[c, BOB, T0 - 1]])),
    ok(
      "holder-cannot",
      "carol, who issued nothing on the chain, revokes her own grant: ignored",
      [r, b, c],
      list([[c, CAROL, T0 - 1]]),
    ),
    ok(
      "below-cannot-revoke-above",
      "bob revokes the grant above his own: ignored",
      [r, b, c],
      list([[b, BOB, T0 - 1]]),
    ),
    ok("stranger-cannot", "mallory's revocation: ignored", [r, b, c], list([[b, MALLORY, T0 - 1]])),
    errCase(
      C,
      "c18-broken-list",
      "a chain verified against a broken list is refused with the list's code",
      "chain.verify",
      V(
        [r, d],
        list([
          [b, ALICE, 1],
          [c, BOB, 2],
        ]).reverse(),
      ),
      "BrokenRevocationList",
    ),
    // jcp §4.4 step 3: the list is verified before the chain, so a broken list wins over a broken
    // chain (here one whose child does not name its parent: BrokenChain on its own).
    errCase(
      C,
      "c18-broken-list-before-chain",
      "a broken chain verified against a broken list: the list's code first",
      "chain.verify",
      V(
        [r, c],
        list([
          [b, ALICE, 1],
          [c, BOB, 2],
        ]).reverse(),
      ),
      "BrokenRevocationList",
    ),
    errCase(
      C,
      "c18-broken-chain-alone",
      "the same broken chain with a sound list: BrokenChain",
      "chain.verify",
      V([r, c], byAlice),
      "BrokenChain",
    ),
  ];
}

function listVectors(): Vector[] {
  const { b, c, d } = tree();
  const L = list([
    [b, ALICE, T0 - 3],
    [d, ROOT, T0 - 2],
    [c, BOB, T0 - 1],
  ]);
  const [e0, e1, e2] = L as [Envelope, Envelope, Envelope];
  let head: Digest = chainGenesis(REVOCATION_TAG, []);
  const heads = [head];
  for (const e of L) heads.push((head = chainNext(head, payloadOf(e))));
  const R = (id: string, desc: string, entries: unknown[], code: string, extra: JsonObject = {}) =>
    errCase(C, `c18-list-${id}`, desc, "revocations.verify", { entries: entries as Json[], ...extra }, code);
  const out: Vector[] = [
    okCase(
      C,
      "c18-list-valid",
      "a three-entry list: its head and length",
      "revocations.verify",
      { entries: L as unknown as Json[] },
      { head: heads[3]!, length: 3 },
    ),
    okCase(
      C,
      "c18-list-empty",
      "the empty list's head is BLAKE3(tag)",
      "revocations.verify",
      { entries: [] },
      { head: heads[0]!, length: 0 },
    ),
    okCase(
      C,
      "c18-list-extends",
      "the list extends its own first entry",
      "revocations.verify",
      { entries: L as unknown as Json[], prefix: { length: 1, head: heads[1]! } },
      { head: heads[3]!, length: 3 },
    ),
    R("rewritten", "the list does not extend a head seen before", L, "BrokenRevocationList", {
      prefix: { length: 1, head: heads[2]! },
    }),
    R("shorter-than-prefix", "a list shorter than one seen before", [e0], "BrokenRevocationList", {
      prefix: { length: 2, head: heads[2]! },
    }),
    R("drop", "the middle entry dropped", [e0, e2], "BrokenRevocationList"),
    R("reorder", "two entries swapped", [e1, e0, e2], "BrokenRevocationList"),
    R(
      "time-backwards",
      "an entry dated before the one above it",
      list([
        [b, ALICE, 5],
        [c, BOB, 4],
      ]),
      "BrokenRevocationList",
    ),
    R(
      "forged",
      "an entry naming alice, signed by mallory",
      [signPayload(REVOCATION_PAYLOAD_TYPE, payloadOf(e0), MALLORY)],
      "BadSignature",
    ),
    R(
      "extra-member",
      "an entry with an unknown member",
      list([[b, ALICE, 1]], { reason: "x" }),
      "BadRevocation",
    ),
  ];
  L.forEach((e, i) =>
    out.push(
      R(
        `payload-bit-${i}`,
        `entry ${i}: payload byte flipped`,
        L.map((x, j) => (j === i ? { ...x, payload: flipBase64Byte(x.payload, 30) } : x)),
        "BadSignature",
      ),
    ),
  );
  return out;
}

export const klass: ConformanceClass = {
  id: C,
  title: "revocation",
  file: "grants.json",
  ops: { "revocations.verify": revocationsVerify },
  generate: () => [...useVectors(), ...listVectors()],
};
