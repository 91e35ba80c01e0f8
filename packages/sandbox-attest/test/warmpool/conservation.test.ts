// §15.6 Conservation on random pools: whatever an honest writer does, every microjoule drawn is
// attributed to exactly one claim or eviction once the pool closes, and the verifier agrees.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  appendEntry,
  claimBody,
  claimComponents,
  closeBody,
  evictBody,
  figureUj,
  verifyLedger,
  type ClaimedEntry,
} from "@sbx/sandbox-attest/warmpool";
import {
  grants,
  host,
  ledgerOf,
  manifest,
  newPool,
  provisionFigure,
  residencyFigure,
  T0,
  unit,
} from "./shared.ts";

type Op =
  { kind: "provision"; cpu: number } | { kind: "claim" | "evict" | "accrue"; pick: number; dt: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("provision" as const), cpu: fc.integer({ min: 1, max: 1_000_000 }) }),
  fc.record({
    kind: fc.constantFrom("claim" as const, "evict" as const, "accrue" as const),
    pick: fc.nat(),
    dt: fc.integer({ min: 1, max: 100_000 }),
  }),
);

test("random honest pools verify, conserve energy, and price every claim in full", () => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
      const s = newPool();
      let now = T0;
      let n = 0;
      const resident = (): string[] =>
        [...s.account.items.values()].filter((i) => i.state === "resident").map((i) => i.item);
      const accrueTo = (item: string, t: number): void => {
        const from = s.account.items.get(item)?.accounted_to_ms ?? t;
        if (t > from)
          appendEntry(
            s,
            { kind: "accrued", item, from_ms: from, to_ms: t, residency: residencyFigure(t - from) },
            host,
          );
      };
      for (const op of ops) {
        if (op.kind === "provision")
          appendEntry(
            s,
            {
              kind: "provisioned",
              item: `i${n++}`,
              manifest,
              at_ms: now,
              provision: provisionFigure(BigInt(op.cpu)),
            },
            host,
          );
        else {
          const r = resident();
          if (r.length === 0) continue;
          const item = r[op.pick % r.length] as string;
          now += op.dt;
          accrueTo(item, now);
          if (op.kind === "claim") appendEntry(s, claimBody(s, item, unit, grants), host);
          if (op.kind === "evict") appendEntry(s, evictBody(s, item, "capacity"), host);
        }
      }
      now += 1;
      for (const item of resident()) {
        accrueTo(item, now);
        appendEntry(s, evictBody(s, item, "host-shutdown"), host);
      }
      appendEntry(s, closeBody(s, now), host);
      const sum = verifyLedger(ledgerOf(s), { requireClosed: true });
      assert.equal(BigInt(sum.drawn_uj), BigInt(sum.claimed_uj) + BigInt(sum.evicted_uj));
      assert.equal(sum.items.claimed + sum.items.evicted, sum.items.provisioned);
      let claimed = 0n;
      for (const c of s.payloads.filter((e): e is ClaimedEntry => e.kind === "claimed"))
        claimed += figureUj(claimComponents(s, c));
      assert.equal(claimed.toString(), sum.claimed_uj);
    }),
    { numRuns: 60 },
  );
});
