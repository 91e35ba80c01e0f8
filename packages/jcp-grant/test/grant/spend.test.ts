// §4.3 spend receipts: debit the whole chain, refuse overspend at any ancestor, replay recomputes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { chainGenesis, payloadOf, signPayload, type Envelope } from "@sbx/wire";
import {
  grantStore,
  RevocationList,
  SPEND_PAYLOAD_TYPE,
  SPEND_TAG,
  SpendLedger,
  type EffectiveGrant,
} from "../../src/index.ts";
import { alice, bob, carol, codeOf, extend, host, HOUR, mallory, NOW, root, rootGrant } from "./fixtures.ts";

const lopts = { roots: [root.did], hosts: [host.did] };

function setup() {
  const r = [rootGrant({ uj: "1000" })];
  const b = extend(r, alice, { holder: bob.did, uj: "700" });
  const c = extend(r, alice, { holder: carol.did, uj: "700", calls: 2 });
  return { r, b, c, store: grantStore([...b, c[1]!]) };
}

test("spend debits every grant on the chain; an ancestor's budget bounds siblings", () => {
  const { b, c } = setup();
  const led = new SpendLedger(lopts);
  led.spend(b, host, { uj: "600" }, NOW);
  const [rootAddr, bAddr] = [...led.remaining().keys()];
  assert.equal(led.remaining().get(rootAddr!)?.uj, "400");
  assert.equal(led.remaining().get(bAddr!)?.uj, "100");
  // carol's own budget (700) allows 500, the root's remaining 400 does not.
  assert.equal(
    codeOf(() => led.spend(c, host, { uj: "500" }, NOW + 1)),
    "Overspend",
  );
  led.spend(c, host, { uj: "400" }, NOW + 1);
  assert.equal(led.remaining().get(rootAddr!)?.uj, "0");
  assert.equal(led.receipts.length, 2);
});

test("calls are a budget too", () => {
  const { c } = setup();
  const led = new SpendLedger(lopts);
  led.spend(c, host, { uj: "1" }, NOW);
  led.spend(c, host, { uj: "1" }, NOW);
  assert.equal(
    codeOf(() => led.spend(c, host, { uj: "1" }, NOW)),
    "Overspend",
  );
});

test("a refused spend changes nothing", () => {
  const { b } = setup();
  const led = new SpendLedger(lopts);
  assert.equal(
    codeOf(() => led.spend(b, host, { uj: "701" }, NOW)),
    "Overspend",
  );
  assert.equal(led.receipts.length, 0);
  assert.equal(led.remaining().size, 0);
});

test("spend refuses an untrusted host, an expired chain, time going backwards", () => {
  const { b } = setup();
  const led = new SpendLedger(lopts);
  assert.equal(
    codeOf(() => led.spend(b, mallory, { uj: "1" }, NOW)),
    "UntrustedHost",
  );
  assert.equal(
    codeOf(() => led.spend(b, host, { uj: "1" }, NOW + 25 * HOUR)),
    "Expired",
  );
  led.spend(b, host, { uj: "1" }, NOW);
  assert.equal(
    codeOf(() => led.spend(b, host, { uj: "1" }, NOW - 1)),
    "BrokenReceiptChain",
  );
});

test("replay recomputes every remaining budget and refuses tampering", () => {
  const { b, c, store } = setup();
  const led = new SpendLedger(lopts);
  led.spend(b, host, { uj: "300", wall_ms: 5 }, NOW);
  led.spend(c, host, { uj: "200" }, NOW + 1);
  led.spend(b, host, { uj: "100" }, NOW + 2);
  const rep = SpendLedger.replay(store, led.receipts, lopts);
  assert.deepEqual([...rep.remaining()], [...led.remaining()]);
  const rs = led.receipts;
  const first = payloadOf(rs[0]!) as Record<string, unknown>;
  assert.equal(first.prev, chainGenesis(SPEND_TAG, [first.grant as `blake3:${string}`]));
  // Dropped, reordered, or re-signed with a changed amount.
  assert.equal(
    codeOf(() => SpendLedger.replay(store, [rs[1]!, rs[2]!], lopts)),
    "BrokenReceiptChain",
  );
  assert.equal(
    codeOf(() => SpendLedger.replay(store, [rs[2]!, rs[0]!, rs[1]!], lopts)),
    "BrokenReceiptChain",
  );
  const cheaper = signPayload(SPEND_PAYLOAD_TYPE, { ...first, uj: "1" }, mallory);
  assert.equal(
    codeOf(() => SpendLedger.replay(store, [cheaper], lopts)),
    "BadSignature",
  );
  const tampered: Envelope = {
    ...rs[0]!,
    payload: Buffer.from(JSON.stringify({ ...first, uj: "1" })).toString("base64"),
  };
  assert.equal(
    codeOf(() => SpendLedger.replay(store, [tampered], lopts)),
    "BadSignature",
  );
  assert.equal(
    codeOf(() => SpendLedger.replay(store, rs, { ...lopts, hosts: [mallory.did] })),
    "UntrustedHost",
  );
  assert.equal(
    codeOf(() => SpendLedger.replay(new Map(), rs, lopts)),
    "BrokenChain",
  );
  // A host that signs an overspend is caught on replay.
  const over = signPayload(SPEND_PAYLOAD_TYPE, { ...first, uj: "701" }, host);
  assert.equal(
    codeOf(() => SpendLedger.replay(store, [over], lopts)),
    "Overspend",
  );
});

test("spend follows the effective grant (§4.7 hook) and revocation", () => {
  const { b, store } = setup();
  const halve = (_a: string, g: EffectiveGrant): EffectiveGrant => ({
    ...g,
    budget: { ...g.budget, uj: g.budget.uj / 2n },
  });
  const led = new SpendLedger({ ...lopts, effective: halve });
  assert.equal(
    codeOf(() => led.spend(b, host, { uj: "351" }, NOW)),
    "Overspend",
  );
  led.spend(b, host, { uj: "350" }, NOW);
  assert.equal(
    codeOf(() => SpendLedger.replay(store, led.receipts, lopts)),
    "ok",
  );
  const revs = new RevocationList();
  revs.revoke(b, alice, NOW + 1);
  const led2 = new SpendLedger({ ...lopts, revocations: revs });
  led2.spend(b, host, { uj: "1" }, NOW);
  assert.equal(
    codeOf(() => led2.spend(b, host, { uj: "1" }, NOW + 1)),
    "Revoked",
  );
  // Receipts made before the revocation still replay.
  assert.equal(
    codeOf(() => SpendLedger.replay(store, led2.receipts, { ...lopts, revocations: revs })),
    "ok",
  );
});

test("extend resumes a verified ledger: the same state as a whole replay, and refuses the same", () => {
  const { b, c, store } = setup();
  const led = new SpendLedger(lopts);
  led.spend(b, host, { uj: "300" }, NOW);
  led.spend(c, host, { uj: "200" }, NOW + 1);
  led.spend(b, host, { uj: "100" }, NOW + 2);
  const rs = led.receipts;
  const resumed = SpendLedger.replay(store, rs.slice(0, 1), lopts);
  resumed.extend(store, rs.slice(1));
  assert.deepEqual(resumed.remaining(), SpendLedger.replay(store, rs, lopts).remaining());
  assert.equal(resumed.count, 3);
  // A receipt out of order, or one already applied, is refused on extend as on replay.
  const again = SpendLedger.replay(store, rs.slice(0, 2), lopts);
  assert.equal(
    codeOf(() => again.extend(store, rs.slice(0, 1))),
    "BrokenReceiptChain",
  );
});

test("draft signs the receipt spend would append but changes nothing; it refuses as spend does", () => {
  const { b, store } = setup();
  const led = new SpendLedger(lopts);
  const env = led.draft(b, host, { uj: "600" }, NOW);
  assert.equal(led.count, 0);
  assert.equal(led.remaining().size, 0);
  led.extend(store, [env]);
  assert.equal([...led.remaining().values()][1]?.uj, "100");
  assert.equal(
    codeOf(() => led.draft(b, host, { uj: "101" }, NOW)),
    "Overspend",
  );
  assert.equal(led.count, 1);
});

test("grantStore keeps the first envelope given for an address (§4.3), never a later one", () => {
  const { b } = setup();
  const leaf = b[1]!;
  const s = leaf.signatures[0]!;
  const broken: Envelope = {
    ...leaf,
    signatures: [
      { keyid: s.keyid, sig: s.sig.startsWith("A") ? `B${s.sig.slice(1)}` : `A${s.sig.slice(1)}` },
    ],
  };
  const [addr] = [...grantStore([leaf]).keys()];
  assert.equal(grantStore([b[0]!, leaf, broken]).get(addr!), leaf);
  assert.equal(grantStore([b[0]!, broken, leaf]).get(addr!), broken);
});
