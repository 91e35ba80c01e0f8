// §4.7 checkpoints and amendments: the grant in force, spend and chain verification under it, and
// each refusal by its code.
import assert from "node:assert/strict";
import { test } from "node:test";
import { addressOf, signPayload, payloadOf, type Envelope } from "@sbx/wire";
import { attenuate, SpendLedger, verifyChain } from "../../src/grant/index.ts";
import {
  AMENDMENT_PAYLOAD_TYPE,
  CheckpointLog,
  CHECKPOINT_PAYLOAD_TYPE,
} from "../../src/checkpoint/index.ts";
import { alice, bob, codeOf, host, HOUR, mallory, NOW, root, rootGrant } from "../grant/fixtures.ts";

const state = addressOf({ step: 1 });
const used = (uj: bigint, calls = 0) => ({ uj, calls, wall_ms: 0 });

function fresh() {
  const chain = [rootGrant()];
  return { chain, log: new CheckpointLog(chain) };
}

test("amendments apply in order; the effective grant tightens", () => {
  const { log } = fresh();
  log.checkpoint(alice, { state, spent: used(1000n, 1), at_ms: NOW });
  log.amend(root, { uj: "3000000" }, NOW + 1);
  log.amend(root, { actions: ["read"], exp_ms: NOW + HOUR }, NOW + 2);
  assert.equal(log.effective.budget.uj, 3000000n);
  assert.deepEqual(log.effective.scope.actions, ["read"]);
  assert.equal(log.effective.exp_ms, NOW + HOUR);
  log.checkpoint(alice, { state, spent: used(2000n, 2), at_ms: NOW + 3 });
  assert.equal(log.length, 4);
  const again = CheckpointLog.replay([rootGrant()], log.entries, {
    prefix: { length: 2, head: log.headAt(2)! },
  });
  assert.equal(again.head, log.head);
});

test("chain verification and spend use the grant in force", () => {
  const { chain, log } = fresh();
  const hook = log.hook();
  const ledger = new SpendLedger({ roots: [root.did], hosts: [host.did], effective: hook });
  ledger.spend(chain, host, { uj: "1000000" }, NOW);
  log.checkpoint(alice, { state, spent: used(1000000n, 1), at_ms: NOW });
  log.amend(root, { uj: "1500000" }, NOW + 1);
  assert.equal(
    verifyChain(chain, { roots: [root.did], at_ms: NOW, effective: hook }).leaf.budget.uj,
    1500000n,
  );
  assert.equal(
    codeOf(() => ledger.spend(chain, host, { uj: "600000" }, NOW + 2)),
    "Overspend",
  );
  assert.equal(
    codeOf(() => ledger.spend(chain, host, { uj: "500000" }, NOW + 2)),
    "ok",
  );
  const child = attenuate(chain, alice, { holder: bob.did, uj: "2000000" });
  assert.equal(
    codeOf(() => verifyChain([...chain, child], { roots: [root.did], at_ms: NOW, effective: hook })),
    "BudgetExceeds",
  );
});

test("separation of duties: only the issuer amends; one principal as both is not amendable", () => {
  const { log } = fresh();
  log.checkpoint(alice, { state, spent: used(0n), at_ms: NOW });
  assert.equal(
    codeOf(() => log.amend(alice, { uj: "1" }, NOW)),
    "SeparationOfDuties",
  );
  assert.equal(
    codeOf(() => log.amend(mallory, { uj: "1" }, NOW)),
    "SeparationOfDuties",
  );
  assert.equal(
    codeOf(() => log.checkpoint(mallory, { state, spent: used(0n), at_ms: NOW })),
    "NotHolder",
  );
  assert.equal(
    codeOf(() => new CheckpointLog([rootGrant({ holder: root.did })])),
    "NotAmendable",
  );
});

test("widening and budget below spend are refused", () => {
  const { log } = fresh();
  log.checkpoint(alice, { state, spent: used(2000000n, 5), at_ms: NOW });
  const cases: [string, Parameters<CheckpointLog["amend"]>[1]][] = [
    ["AmendmentWidens", { uj: "5000001" }],
    ["AmendmentWidens", { calls: 101 }],
    ["AmendmentWidens", { actions: ["exec"] }],
    ["AmendmentWidens", { resources: ["/fs/**"] }],
    ["AmendmentWidens", { exp_ms: NOW + 25 * HOUR }],
    ["AmendmentWidens", { depth: 5 }],
    ["BudgetBelowSpent", { uj: "1999999" }],
    ["BudgetBelowSpent", { calls: 4 }],
    ["BadAmendment", { exp_ms: NOW - 2 * HOUR }],
    ["BadAmendment", {}],
    ["ok", { uj: "2000000", depth: 4 }],
  ];
  for (const [code, set] of cases)
    assert.equal(
      codeOf(() => log.amend(root, set, NOW)),
      code,
      JSON.stringify(set),
    );
});

test("a checkpoint must acknowledge every amendment; an amendment cites the latest checkpoint", () => {
  const { log } = fresh();
  assert.equal(
    codeOf(() => log.amend(root, { uj: "1" }, NOW)),
    "BadAmendment",
  );
  log.checkpoint(alice, { state, spent: used(0n), at_ms: NOW });
  log.amend(root, { uj: "4000000" }, NOW + 1);
  const stale = {
    grant: log.original.address,
    seq: log.length + 1,
    prev: log.head,
    state,
    spent: { uj: "0", calls: 0, wall_ms: 0 },
    amendments: 0,
    at_ms: NOW + 2,
    by: alice.did,
  };
  assert.equal(
    codeOf(() => log.append(signPayload(CHECKPOINT_PAYLOAD_TYPE, stale, alice))),
    "UnacknowledgedAmendment",
  );
  const ahead = { ...stale, amendments: 2 };
  assert.equal(
    codeOf(() => log.append(signPayload(CHECKPOINT_PAYLOAD_TYPE, ahead, alice))),
    "BadCheckpoint",
  );
  const back = { ...stale, amendments: 1, spent: { uj: "0", calls: 0, wall_ms: 0 } };
  assert.equal(
    codeOf(() => log.append(signPayload(CHECKPOINT_PAYLOAD_TYPE, back, alice))),
    "ok",
  );
});

test("a log with a gap, fork, reorder or forged entry is refused", () => {
  const { log } = fresh();
  log.checkpoint(alice, { state, spent: used(0n), at_ms: NOW });
  log.amend(root, { uj: "4000000" }, NOW + 1);
  log.checkpoint(alice, { state, spent: used(1n), at_ms: NOW + 2 });
  const [a, b, c] = log.entries as [Envelope, Envelope, Envelope];
  const replay = (es: unknown[]) => codeOf(() => CheckpointLog.replay([rootGrant()], es));
  assert.equal(replay([a, c]), "BrokenCheckpointLog");
  assert.equal(replay([b, a, c]), "BrokenCheckpointLog");
  assert.equal(replay([a, b, b]), "BrokenCheckpointLog");
  const fork = CheckpointLog.replay([rootGrant()], [a]);
  fork.checkpoint(alice, { state, spent: used(5n), at_ms: NOW + 1 });
  assert.equal(
    codeOf(() =>
      CheckpointLog.replay([rootGrant()], fork.entries, { prefix: { length: 2, head: log.headAt(2)! } }),
    ),
    "BrokenCheckpointLog",
  );
  const byHolder = signPayload(AMENDMENT_PAYLOAD_TYPE, payloadOf(b), alice);
  assert.equal(replay([a, byHolder]), "BadSignature");
  const holderNamed = signPayload(
    AMENDMENT_PAYLOAD_TYPE,
    { ...(payloadOf(b) as object), by: alice.did },
    alice,
  );
  assert.equal(replay([a, holderNamed]), "SeparationOfDuties");
});
