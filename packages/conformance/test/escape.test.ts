// §5, §12 The escape battery, case by case: each is a real process inside the sandbox trying a way
// out, and each must fail while the attestation states the level the host provided (S4).
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { runEscapeBattery, type EscapeCase } from "../src/live/sandbox.ts";

const EXPECTED = [
  "sandbox-write-outside",
  "sandbox-read-host",
  "sandbox-host-loopback",
  "sandbox-no-network",
  "sandbox-host-processes",
  "sandbox-mount",
  "sandbox-proc-sys",
  "sandbox-user-namespace",
  "sandbox-kernel",
  "sandbox-host-uid",
  "sandbox-inherited-fd",
  "sandbox-handshake-fds",
];

let cases: EscapeCase[] = [];
before(async () => {
  cases = await runEscapeBattery();
});

test("the battery runs every case, no more and no fewer", () => {
  assert.deepEqual(cases.map((c) => c.id).sort(), [...EXPECTED].sort(), JSON.stringify(cases));
});

for (const id of EXPECTED)
  test(`escape: ${id}`, () => {
    const c = cases.find((x) => x.id === id);
    assert.ok(c, `case ${id} ran`);
    assert.equal(c.passed, true, `${c.desc}: ${c.detail ?? ""}`);
  });
