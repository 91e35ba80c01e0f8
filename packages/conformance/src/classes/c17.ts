// C17: spend receipts (jcp §4.3). Receipts from the reference ledger replay to stated remaining
// budgets; then the receipt list is broken systematically (dropped, reordered, bits flipped,
// re-signed, relabelled) and host-signed receipts that overspend an ancestor are refused.
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
import { SPEND_PAYLOAD_TYPE, SPEND_TAG, SpendLedger } from "@sbx/jcp-grant/grant";
import { errCase, flipBase64Byte, okCase } from "../generate/build.ts";
import type { ConformanceClass, Vector } from "../types.ts";
import {
  addr,
  ALICE,
  BOB,
  CAROL,
  childPayload,
  HOST,
  HOUR,
  MALLORY,
  ROOT,
  rootPayload,
  sign,
  T0,
} from "./grants/fixtures.ts";
import { spendReplay } from "./grants/ops.ts";

const C = "C17" as const;

function grants() {
  const r = sign(rootPayload({ budget: { uj: "1000", calls: 10 } }), ROOT);
  const b = sign(childPayload(r, ALICE, BOB, "spend-b", { budget: { uj: "700" } }), ALICE);
  const c = sign(childPayload(r, ALICE, CAROL, "spend-c", { budget: { uj: "700", wall_ms: 50 } }), ALICE);
  return { r, b, c };
}

/** brokenSig flips a byte of a grant's signature, keeping the payload and so its address. */
function brokenSig(env: Envelope): Envelope {
  const s = env.signatures[0]!;
  return { ...env, signatures: [{ keyid: s.keyid, sig: flipBase64Byte(s.sig, 5) }] };
}

/** receipt signs a receipt by hand (for the broken cases), chained after `prev`. */
function receipt(
  leaf: Envelope,
  seq: number,
  prev: Digest,
  uj: string,
  at_ms: number,
  by: KeyPair = HOST,
  extra: JsonObject = {},
): Envelope {
  return signPayload(
    SPEND_PAYLOAD_TYPE,
    { grant: addr(leaf), seq, prev, uj, calls: 1, wall_ms: 0, at_ms, host: HOST.did, ...extra },
    by,
  );
}

function input(
  g: ReturnType<typeof grants>,
  receipts: readonly unknown[],
  extra: JsonObject = {},
): JsonObject {
  return {
    grants: [g.r, g.b, g.c] as unknown as Json[],
    receipts: receipts as Json[],
    roots: [ROOT.did],
    hosts: [HOST.did],
    ...extra,
  };
}

function vectors(): Vector[] {
  const g = grants();
  const led = new SpendLedger({ roots: [ROOT.did], hosts: [HOST.did] });
  led.spend([g.r, g.b], HOST, { uj: "300" }, T0);
  led.spend([g.r, g.c], HOST, { uj: "200", wall_ms: 20 }, T0 + 1);
  led.spend([g.r, g.b], HOST, { uj: "100" }, T0 + 2);
  const rs = [...led.receipts];
  const [rb1, rc1, rb2] = rs as [Envelope, Envelope, Envelope];
  const R = (id: string, desc: string, list: readonly unknown[], code: string, extra: JsonObject = {}) =>
    errCase(C, `c17-${id}`, desc, "spend.replay", input(g, list, extra), code);
  // Remaining budgets are stated: root 1000 − 600, b 700 − 400, c 700 − 200 with 30 ms of wall left.
  const remaining = {
    [addr(g.r)]: { uj: "400", calls: 7, wall_ms: null },
    [addr(g.b)]: { uj: "300", calls: 8, wall_ms: null },
    [addr(g.c)]: { uj: "500", calls: 9, wall_ms: 30 },
  };
  const sorted = Object.fromEntries(Object.entries(remaining).sort(([x], [y]) => (x < y ? -1 : 1)));
  const headB = chainNext(chainNext(chainGenesis(SPEND_TAG, [addr(g.b)]), payloadOf(rb1)), payloadOf(rb2));
  const headC = chainNext(chainGenesis(SPEND_TAG, [addr(g.c)]), payloadOf(rc1));
  const out: Vector[] = [
    okCase(
      C,
      "c17-replay",
      "three receipts debit every grant on their chains",
      "spend.replay",
      input(g, rs),
      { remaining: sorted, overshoot: {} },
    ),
    okCase(C, "c17-replay-none", "no receipts: nothing debited", "spend.replay", input(g, []), {
      remaining: {},
      overshoot: {},
    }),
    // §4.3: the grants given are a store; a grant is opened only when a receipt's chain reaches it,
    // so a broken grant no receipt uses does not refuse the replay, and one a receipt uses does.
    okCase(
      C,
      "c17-replay-unused-broken-grant",
      "carol's grant with a flipped signature, on no receipt's chain: not opened, the replay stands",
      "spend.replay",
      {
        ...input(g, [rb1]),
        grants: [g.r, g.b, brokenSig(g.c)] as unknown as Json[],
      },
      {
        remaining: {
          [addr(g.r)]: { uj: "700", calls: 9, wall_ms: null },
          [addr(g.b)]: { uj: "400", calls: 9, wall_ms: null },
        },
        overshoot: {},
      },
    ),
    errCase(
      C,
      "c17-replay-used-broken-grant",
      "bob's grant with a flipped signature, on the receipt's chain: refused",
      "spend.replay",
      { ...input(g, [rb1]), grants: [g.r, brokenSig(g.b), g.c] as unknown as Json[] },
      "BadSignature",
    ),
    // §4.3: of two grants given with one address (one payload, two envelopes), the first given is
    // the store's; a later one is ignored.
    errCase(
      C,
      "c17-replay-same-address-first-broken",
      "bob's grant given twice, first with a flipped signature: the first is used, refused",
      "spend.replay",
      { ...input(g, [rb1]), grants: [g.r, brokenSig(g.b), g.b, g.c] as unknown as Json[] },
      "BadSignature",
    ),
    okCase(
      C,
      "c17-replay-same-address-first-valid",
      "bob's grant given twice, the second with a flipped signature: the first is used, the replay stands",
      "spend.replay",
      { ...input(g, [rb1]), grants: [g.r, g.b, brokenSig(g.b), g.c] as unknown as Json[] },
      {
        remaining: {
          [addr(g.r)]: { uj: "700", calls: 9, wall_ms: null },
          [addr(g.b)]: { uj: "400", calls: 9, wall_ms: null },
        },
        overshoot: {},
      },
    ),
    // §4.3: only grants on some receipt's chain are listed; carol's grant, given but never debited, is not.
    okCase(
      C,
      "c17-replay-one-leaf",
      "one receipt under bob: the root and bob are listed, carol's untouched grant is not",
      "spend.replay",
      input(g, [rb1]),
      {
        remaining: {
          [addr(g.r)]: { uj: "700", calls: 9, wall_ms: null },
          [addr(g.b)]: { uj: "400", calls: 9, wall_ms: null },
        },
        overshoot: {},
      },
    ),
    R("drop-first", "the first receipt of bob's chain dropped", [rc1, rb2], "BrokenReceiptChain"),
    R("reorder", "bob's two receipts swapped", [rb2, rc1, rb1], "BrokenReceiptChain"),
    R("duplicate", "a receipt replayed twice", [rb1, rb1], "BrokenReceiptChain"),
    R(
      "wrong-prev",
      "a receipt citing another leaf's head",
      [rb1, receipt(g.c, 1, chainGenesis(SPEND_TAG, [addr(g.b)]), "1", T0)],
      "BrokenReceiptChain",
    ),
    R(
      "time-backwards",
      "a receipt dated before the one above it",
      [rb1, receipt(g.b, 2, chainNext(chainGenesis(SPEND_TAG, [addr(g.b)]), payloadOf(rb1)), "1", T0 - 1)],
      "BrokenReceiptChain",
    ),
    R("untrusted-host", "receipts from a host the verifier does not trust", rs, "UntrustedHost", {
      hosts: [MALLORY.did],
    }),
    R(
      "mallory-host",
      "a receipt by mallory naming herself as host",
      [receipt(g.b, 1, chainGenesis(SPEND_TAG, [addr(g.b)]), "1", T0, MALLORY, { host: MALLORY.did })],
      "UntrustedHost",
    ),
    R(
      "forged-host",
      "a receipt naming the trusted host, signed by mallory",
      [receipt(g.b, 1, chainGenesis(SPEND_TAG, [addr(g.b)]), "1", T0, MALLORY)],
      "BadSignature",
    ),
    R(
      "extra-member",
      "a receipt with an unknown member",
      [receipt(g.b, 1, chainGenesis(SPEND_TAG, [addr(g.b)]), "1", T0, HOST, { note: "x" })],
      "BadReceipt",
    ),
    // §4.3 "Verifying spend", the order inside opening a receipt: the envelope's wire checks with
    // the 4096-byte bound (BadReceipt) before any signature, then the member form (BadReceipt),
    // then the one signer its host (BadSignature).
    R(
      "oversize-bad-signature",
      "a receipt over 4096 payload bytes whose signature is broken: BadReceipt, the size before the signature",
      [
        brokenSig(
          receipt(g.b, 1, chainGenesis(SPEND_TAG, [addr(g.b)]), "1", T0, HOST, { note: "x".repeat(4200) }),
        ),
      ],
      "BadReceipt",
    ),
    R(
      "bad-form-other-signer",
      "a receipt with an unknown member, signed by mallory: BadReceipt, the form before its signer",
      [receipt(g.b, 1, chainGenesis(SPEND_TAG, [addr(g.b)]), "1", T0, MALLORY, { note: "x" })],
      "BadReceipt",
    ),
    R(
      "uj-number",
      "a receipt amount as a JSON number",
      [receipt(g.b, 1, chainGenesis(SPEND_TAG, [addr(g.b)]), "1", T0, HOST, { uj: 1 })],
      "BadReceipt",
    ),
    R(
      "overspend-leaf",
      "a host-signed receipt over bob's own budget",
      [receipt(g.b, 1, chainGenesis(SPEND_TAG, [addr(g.b)]), "701", T0)],
      "Overspend",
    ),
    R(
      "overspend-ancestor",
      "carol within her budget but over the root's remaining",
      [...rs, receipt(g.c, 2, headC, "401", T0 + 3)],
      "Overspend",
    ),
    R("overspend-calls", "the root's 10 calls exceeded", overCalls(g), "Overspend"),
    R("overspend-wall", "carol's 50 ms of wall time exceeded", [rc1Alone(g, 51)], "Overspend"),
    R(
      "after-expiry",
      "a receipt dated after the grant expired",
      [receipt(g.b, 1, chainGenesis(SPEND_TAG, [addr(g.b)]), "1", T0 + 24 * HOUR)],
      "Expired",
    ),
    R(
      "unknown-grant",
      "a receipt for a grant the verifier was not given",
      [
        receipt(
          sign(childPayload(g.r, ALICE, BOB, "spend-x"), ALICE),
          1,
          chainGenesis(SPEND_TAG, [addr(sign(childPayload(g.r, ALICE, BOB, "spend-x"), ALICE))]),
          "1",
          T0,
        ),
      ],
      "BrokenChain",
    ),
  ];
  rs.forEach((e, i) => {
    out.push(
      R(
        `payload-bit-${i}`,
        `receipt ${i}: a payload byte flipped`,
        rs.map((x, j) => (j === i ? { ...x, payload: flipBase64Byte(x.payload, 40) } : x)),
        "BadSignature",
      ),
    );
    const s = e.signatures[0]!;
    out.push(
      R(
        `sig-bit-${i}`,
        `receipt ${i}: a signature byte flipped`,
        rs.map((x, j) =>
          j === i ? { ...x, signatures: [{ keyid: s.keyid, sig: flipBase64Byte(s.sig, 5) }] } : x,
        ),
        "BadSignature",
      ),
    );
  });
  out.push(...citesCases(g), ...overshootCases(g));
  // Sanity: the stated head is what the generator built (construction, not an expected outcome).
  if (led.headOf(addr(g.b)) !== headB)
    throw new Error("C17 generator: bob's head differs from its construction");
  return out;
}

function overCalls(g: ReturnType<typeof grants>): Envelope[] {
  const out: Envelope[] = [];
  let head = chainGenesis(SPEND_TAG, [addr(g.b)]);
  for (let i = 1; i <= 11; i++) {
    const e = receipt(g.b, i, head, "1", T0);
    head = chainNext(head, payloadOf(e));
    out.push(e);
  }
  return out;
}

// §4.3 "What a receipt pays for": an optional `cites` of exactly {attestation, energy}, both digests.
function citesCases(g: ReturnType<typeof grants>): Vector[] {
  const A = `blake3:${"a1".repeat(32)}`;
  const E = `blake3:${"e2".repeat(32)}`;
  const gen = chainGenesis(SPEND_TAG, [addr(g.b)]);
  const one = (cites: Json) => [receipt(g.b, 1, gen, "300", T0, HOST, { cites })];
  const bad = (id: string, desc: string, cites: Json) =>
    errCase(C, `c17-cites-${id}`, desc, "spend.replay", input(g, one(cites)), "BadReceipt");
  return [
    okCase(
      C,
      "c17-cites",
      "a receipt citing the attestation and energy receipt it pays for debits as any other",
      "spend.replay",
      input(g, one({ attestation: A, energy: E })),
      {
        remaining: {
          [addr(g.r)]: { uj: "700", calls: 9, wall_ms: null },
          [addr(g.b)]: { uj: "400", calls: 9, wall_ms: null },
        },
        overshoot: {},
      },
    ),
    bad("extra-member", "cites with a third member", { attestation: A, energy: E, run: A }),
    bad("missing-member", "cites without energy", { attestation: A }),
    bad("not-digest", "cites.energy not a digest", { attestation: A, energy: "blake3:00" }),
    bad("not-object", "cites as a list", [A, E]),
    bad("null", "cites null", null),
  ];
}

// §4.3 "Overshoot": a receipt with `overshoot_uj` (an amount above 0) debits exactly what was left
// along its chain (the least of budget − used over its grants); the replay lists the overshoot under
// every grant on the chain. Expected figures stated by hand: root 1000, bob 700, carol 700.
function overshootCases(g: ReturnType<typeof grants>): Vector[] {
  const genB = chainGenesis(SPEND_TAG, [addr(g.b)]);
  const genC = chainGenesis(SPEND_TAG, [addr(g.c)]);
  const b1 = receipt(g.b, 1, genB, "300", T0);
  const headB1 = chainNext(genB, payloadOf(b1));
  // bob has 400 left (700 − 300), the root 700: bob's 400 is the remainder.
  const b2 = receipt(g.b, 2, headB1, "400", T0 + 1, HOST, { overshoot_uj: "250" });
  const headB2 = chainNext(headB1, payloadOf(b2));
  const b3 = receipt(g.b, 3, headB2, "0", T0 + 2, HOST, { overshoot_uj: "10" });
  // after b1 and b2 the root has 300 left and carol 700: the root's 300 is carol's remainder.
  const c1 = (uj: string) => receipt(g.c, 1, genC, uj, T0 + 3, HOST, { overshoot_uj: "100" });
  const form = (id: string, desc: string, over: Json) =>
    errCase(
      C,
      `c17-overshoot-${id}`,
      desc,
      "spend.replay",
      input(g, [receipt(g.b, 1, genB, "700", T0, HOST, { overshoot_uj: over })]),
      "BadReceipt",
    );
  const refuse = (id: string, desc: string, list: readonly unknown[]) =>
    errCase(C, `c17-overshoot-${id}`, desc, "spend.replay", input(g, list), "BadOvershoot");
  return [
    okCase(
      C,
      "c17-overshoot",
      "bob's second receipt debits the 400 µJ left and records 250 µJ beyond; a third debits 0 and records 10",
      "spend.replay",
      input(g, [b1, b2, b3]),
      {
        remaining: {
          [addr(g.r)]: { uj: "300", calls: 7, wall_ms: null },
          [addr(g.b)]: { uj: "0", calls: 7, wall_ms: null },
        },
        overshoot: { [addr(g.r)]: "260", [addr(g.b)]: "260" },
      },
    ),
    okCase(
      C,
      "c17-overshoot-ancestor",
      "carol's receipt debits the root's 300 µJ left (not her own 700) and records 100 beyond",
      "spend.replay",
      input(g, [b1, b2, c1("300")]),
      {
        remaining: sortedKeys({
          [addr(g.r)]: { uj: "0", calls: 7, wall_ms: null },
          [addr(g.b)]: { uj: "0", calls: 8, wall_ms: null },
          [addr(g.c)]: { uj: "400", calls: 9, wall_ms: 50 },
        }),
        overshoot: sortedKeys({ [addr(g.r)]: "350", [addr(g.b)]: "250", [addr(g.c)]: "100" }),
      },
    ),
    refuse("not-remainder", "an overshoot on a receipt debiting 300 µJ of the 700 left", [
      receipt(g.b, 1, genB, "300", T0, HOST, { overshoot_uj: "5" }),
    ]),
    refuse("above-remainder", "an overshoot on a receipt debiting 701 µJ of the 700 left", [
      receipt(g.b, 1, genB, "701", T0, HOST, { overshoot_uj: "1" }),
    ]),
    refuse("own-not-chain", "carol's overshoot debiting her own 400 µJ, not the root's 300 left", [
      b1,
      b2,
      c1("400"),
    ]),
    form("zero", "overshoot_uj of 0", "0"),
    form("number", "overshoot_uj as a JSON number", 5),
    form("negative", "overshoot_uj negative", "-1"),
    form("leading-zero", "overshoot_uj with a leading zero", "01"),
    form("null", "overshoot_uj null", null),
  ];
}

function sortedKeys(o: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(o).sort(([x], [y]) => (x < y ? -1 : 1)));
}

function rc1Alone(g: ReturnType<typeof grants>, wall: number): Envelope {
  return receipt(g.c, 1, chainGenesis(SPEND_TAG, [addr(g.c)]), "1", T0, HOST, { wall_ms: wall });
}

export const klass: ConformanceClass = {
  id: C,
  title: "spend receipts",
  file: "grants.json",
  ops: { "spend.replay": spendReplay },
  generate: vectors,
};
