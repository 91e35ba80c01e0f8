// Property (issue 8): for random event streams the ledger never admits more children, budget or rate
// than the policy allows. A literal reference (every window recounted from scratch) decides what a
// ledger may hold; the minter's ledgers satisfy it, and a verifier accepts a hand-built ledger
// exactly when the reference does.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { addressOf, formatAmount, payloadOf, signPayload, type Digest, type Envelope } from "@sbx/wire";
import { attenuate } from "../../src/grant/index.ts";
import {
  eventAddress,
  MINT_PAYLOAD_TYPE,
  StandingMinter,
  verifyMintLedger,
} from "../../src/standing/index.ts";
import { chainGenesis, chainNext } from "@sbx/wire";
import { MINT_LEDGER_TAG } from "../../src/standing/index.ts";
import { alice, bob, ev, NOW, root, standing } from "./fixtures.ts";

const RULES = { max_children: 5, max_total_uj: "250000", rate: { count: 2, window_ms: 10_000 } };
const MAX_TOTAL = 250000n;

interface Mint {
  at_ms: number;
  event: number;
  uj: bigint;
}

/** The literal reference: may a ledger hold exactly these mints, in this order? */
function allowed(ms: readonly Mint[]): boolean {
  const seen = new Set<number>();
  let total = 0n;
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i]!;
    if (seen.has(m.event) || i + 1 > RULES.max_children) return false;
    seen.add(m.event);
    total += m.uj;
    if (total > MAX_TOTAL) return false;
    let n = 0;
    for (let j = 0; j <= i; j++) if (ms[j]!.at_ms > m.at_ms - RULES.rate.window_ms) n++;
    if (n > RULES.rate.count) return false;
  }
  return true;
}

const stream = fc.array(
  fc.record({
    gap: fc.integer({ min: 0, max: 9000 }),
    event: fc.integer({ min: 0, max: 5 }),
    uj: fc.integer({ min: 1, max: 100000 }),
  }),
  { minLength: 1, maxLength: 8 },
);

function times(s: readonly { gap: number }[]): number[] {
  let t = NOW;
  return s.map((x) => (t += x.gap));
}

test("the minter never admits more children, budget or rate than the policy allows", () => {
  const s = standing(RULES);
  fc.assert(
    fc.property(stream, (xs) => {
      const m = new StandingMinter(s, alice);
      const ts = times(xs);
      const admitted: Mint[] = [];
      const events: unknown[] = [];
      const children: Envelope[] = [];
      xs.forEach((x, i) => {
        try {
          const e = ev(x.event);
          const r = m.mint(e, ts[i]!);
          admitted.push({ at_ms: ts[i]!, event: x.event, uj: 100000n });
          events.push(e);
          children.push(r.child);
        } catch (err) {
          if (typeof (err as { code?: unknown }).code !== "string") throw err;
        }
      });
      assert.ok(allowed(admitted));
      assert.equal(
        verifyMintLedger({ ...s, entries: [...m.entries], events, children }).length,
        admitted.length,
      );
    }),
    { numRuns: 40, seed: 8 },
  );
});

test("a verifier accepts a hand-built ledger exactly when the reference allows it", () => {
  const s = standing(RULES);
  const policy = payloadOf(s.policy) as { grant: Digest };
  const pAddr = addressOf(payloadOf(s.policy));
  fc.assert(
    fc.property(stream, (xs) => {
      const ts = times(xs);
      let head = chainGenesis(MINT_LEDGER_TAG, [pAddr]);
      const events: unknown[] = [];
      const children: Envelope[] = [];
      const entries: Envelope[] = [];
      const mints: Mint[] = [];
      xs.forEach((x, i) => {
        const e = ev(x.event, NOW);
        const at_ms = ts[i]!;
        const uj = formatAmount(BigInt(x.uj));
        const child = attenuate(s.held, alice, {
          holder: bob.did,
          resources: ["/fs/work/build/**"],
          uj,
          calls: 10,
          nbf_ms: at_ms,
          exp_ms: at_ms + 1000,
          depth: 0,
          mint: { policy: pAddr, event: eventAddress(e) },
        });
        const childAddr = addressOf(payloadOf(child));
        const entry = {
          policy: pAddr,
          seq: i + 1,
          prev: head,
          event: eventAddress(e),
          child: childAddr,
          uj,
          at_ms,
          minter: alice.did,
        };
        head = chainNext(head, entry);
        entries.push(signPayload(MINT_PAYLOAD_TYPE, entry, alice));
        events.push(e);
        children.push(child);
        mints.push({ at_ms, event: x.event, uj: BigInt(x.uj) });
      });
      let code = "ok";
      try {
        verifyMintLedger({ ...s, entries, events, children, roots: [root.did] });
      } catch (err) {
        code = (err as { code: string }).code;
      }
      assert.equal(code === "ok", allowed(mints), `${code} for ${JSON.stringify(xs)}`);
      if (code !== "ok")
        assert.ok(
          ["EventReplayed", "MintCapExceeded", "MintBudgetExceeded", "RateExceeded"].includes(code),
          code,
        );
      assert.ok(policy.grant);
    }),
    { numRuns: 40, seed: 88 },
  );
});
