// §16.1 The fleet's id index against a Map, the literal statement of what it does: random adds
// (with repeats, so duplicates), take-backs of the last add, and look-ups, through table growth.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ItemIndex } from "../../src/fleet/ids.ts";

type Op = { add: string } | { removeLast: true } | { get: string };

const id = fc.oneof(fc.stringMatching(/^[a-c]{1,3}$/), fc.stringMatching(/^[A-Za-z0-9._:/@+-]{1,12}$/));
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: id.map((add) => ({ add })) },
  { weight: 1, arbitrary: fc.constant({ removeLast: true as const }) },
  { weight: 3, arbitrary: id.map((get) => ({ get })) },
);

test("ItemIndex behaves as a Map from id to insertion index, through growth", () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 400 }), fc.nat(50), (ops, expected) => {
      const x = new ItemIndex(expected);
      const ref = new Map<string, number>();
      const order: string[] = [];
      ops.forEach((o, i) => {
        if ("add" in o) {
          const fresh = !ref.has(o.add);
          assert.equal(x.add(o.add), fresh, `op ${i}: add ${o.add}`);
          if (fresh) ref.set(o.add, order.push(o.add) - 1);
        } else if ("removeLast" in o) {
          x.removeLast();
          const last = order.pop();
          if (last !== undefined) ref.delete(last);
        } else assert.equal(x.get(o.get), ref.get(o.get), `op ${i}: get ${o.get}`);
        assert.equal(x.size, ref.size, `op ${i}: size`);
      });
      for (const [k, v] of ref) assert.equal(x.get(k), v, `final get ${k}`);
    }),
    { numRuns: 300 },
  );
});

test("ten thousand distinct ids from an unsized index: every one found, every repeat refused", () => {
  const x = new ItemIndex();
  const ids = Array.from({ length: 10_000 }, (_, i) => `run-${i}`);
  for (const [i, s] of ids.entries()) assert.equal(x.add(s), true, `add ${i}`);
  for (const [i, s] of ids.entries()) {
    assert.equal(x.get(s), i, `get ${i}`);
    assert.equal(x.add(s), false, `repeat ${i}`);
  }
  assert.equal(x.get("run-10000"), undefined);
  x.removeLast();
  assert.equal(x.get("run-9999"), undefined);
  assert.equal(x.add("run-9999"), true);
  assert.equal(x.get("run-9999"), 9999);
});
