// §4.5 revocation: who may revoke, what it invalidates, the append-only list.
import assert from "node:assert/strict";
import { test } from "node:test";
import { addressOf, payloadOf } from "@sbx/wire";
import { RevocationList, verifyChain } from "../../src/index.ts";
import { alice, bob, carol, codeOf, dave, extend, mallory, NOW, root, rootGrant } from "./fixtures.ts";

function tree() {
  const r = [rootGrant()];
  const ab = extend(r, alice, { holder: bob.did });
  const abc = extend(ab, bob, { holder: carol.did });
  const ad = extend(r, alice, { holder: dave.did });
  return { r, ab, abc, ad };
}
const at = (list: RevocationList, ms = NOW) => ({ roots: [root.did], at_ms: ms, revocations: list });

test("revoking a grant invalidates it and its descendants and nothing else", () => {
  const { r, ab, abc, ad } = tree();
  const list = new RevocationList();
  list.revoke(ab, alice, NOW - 10);
  assert.equal(
    codeOf(() => verifyChain(ab, at(list))),
    "Revoked",
  );
  assert.equal(
    codeOf(() => verifyChain(abc, at(list))),
    "Revoked",
  );
  assert.equal(verifyChain(ad, at(list)).grants.length, 2);
  assert.equal(verifyChain(r, at(list)).grants.length, 1);
  // Before the revocation's time the chain was valid.
  assert.equal(verifyChain(abc, at(list, NOW - 11)).grants.length, 3);
});

test("any issuer above may revoke; others may not", () => {
  const { abc } = tree();
  for (const k of [root, alice, bob]) {
    const list = new RevocationList();
    list.revoke(abc, k, NOW - 1);
    assert.equal(
      codeOf(() => verifyChain(abc, at(list))),
      "Revoked",
      k.did,
    );
  }
  assert.equal(
    codeOf(() => new RevocationList().revoke(abc, carol, NOW)),
    "NotAuthorized",
  );
  assert.equal(
    codeOf(() => new RevocationList().revoke(abc, mallory, NOW)),
    "NotAuthorized",
  );
});

test("an unauthorised entry in the list has no effect", () => {
  const { ab, abc } = tree();
  // bob issued abc's leaf but not ab: bob's revocation of ab (made via the longer chain's prefix is refused) is ignored.
  const list = new RevocationList();
  list.revoke(abc, bob, NOW - 5);
  const rogue = RevocationList.verify([...list.entries]);
  assert.equal(verifyChain(ab, at(rogue)).grants.length, 2);
});

test("the list is append-only and tamper-evident", () => {
  const { ab, ad, abc } = tree();
  const list = new RevocationList();
  list.revoke(ab, alice, NOW - 3);
  const mid = { length: list.length, head: list.head };
  list.revoke(ad, root, NOW - 2);
  list.revoke(abc, bob, NOW - 1);
  const e = list.entries;
  assert.equal(RevocationList.verify(e, mid).length, 3);
  assert.equal(
    codeOf(() => RevocationList.verify([e[0]!, e[2]!])),
    "BrokenRevocationList",
  );
  assert.equal(
    codeOf(() => RevocationList.verify([e[1]!, e[0]!, e[2]!])),
    "BrokenRevocationList",
  );
  const other = new RevocationList();
  other.revoke(ad, root, NOW - 3);
  assert.equal(
    codeOf(() => RevocationList.verify(other.entries, mid)),
    "BrokenRevocationList",
  );
  const p = payloadOf(e[0]!) as Record<string, unknown>;
  const swapped = {
    ...e[0]!,
    payload: Buffer.from(JSON.stringify({ ...p, grant: addressOf({}) })).toString("base64"),
  };
  assert.equal(
    codeOf(() => RevocationList.verify([swapped])),
    "BadSignature",
  );
});
