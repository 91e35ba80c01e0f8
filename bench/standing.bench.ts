// Standing grants and checkpoints (issue 8): mints per second (child attenuated and signed, ledger
// entry checked against every policy constraint, hashed into the chain and signed), mint-ledger
// verification per entry, and checkpoint-log replay per entry, each against the Ed25519 verify rate
// measured in this same run (the anchor). Subjects run round-robin so that load falls on all alike.
import {
  addressOf,
  ed25519,
  fromBase64,
  openEnvelope,
  pae,
  payloadOf,
  testKey,
  type Envelope,
} from "@sbx/wire";
import { GrantCache, issueGrant } from "@sbx/jcp-grant/grant";
import { createPolicy, StandingMinter, verifyMintLedger } from "@sbx/jcp-grant/standing";
import { CheckpointLog } from "@sbx/jcp-grant/checkpoint";
import { median, rate, row } from "./measure.ts";

const N = Number(process.env.BENCH_STANDING_N ?? 200);
const RUNS = 5;
const HOUR = 3_600_000;

function setup(now: number) {
  const issuer = testKey("root-issuer");
  const agent = testKey("alice");
  const held = [
    issueGrant(issuer, {
      holder: agent.did,
      resources: ["/fs/work/**"],
      actions: ["read", "write"],
      uj: "1000000000000",
      exp_ms: now + 24 * HOUR,
      depth: 3,
    }),
  ];
  const policy = createPolicy(issuer, {
    grant: addressOf(payloadOf(held[0]!)),
    issuer: issuer.did,
    minter: agent.did,
    triggers: [{ type: "ci.push", source: "github" }],
    template: {
      holder: testKey("bob").did,
      resources: ["/fs/work/build/**"],
      actions: ["write"],
      uj: "1000",
      lifetime_ms: HOUR,
      depth: 0,
    },
    max_children: 1_000_000,
    max_total_uj: "1000000000000",
    rate: { count: 1_000_000, window_ms: 60_000 },
    nbf_ms: now - HOUR,
    exp_ms: now + 12 * HOUR,
  });
  return { issuer, agent, held, policy };
}

/** mintAll mints `n` children on fresh events; returns the minter and the ledger files. */
function mintAll(s: ReturnType<typeof setup>, now: number, n: number, cache?: GrantCache) {
  const m = new StandingMinter({ policy: s.policy, held: s.held }, s.agent, cache ? { cache } : {});
  const events: unknown[] = [];
  const children: Envelope[] = [];
  for (let i = 0; i < n; i++) {
    const ev = { type: "ci.push", source: "github", at_ms: now, id: `e${i}` };
    const r = m.mint(ev, now + i);
    events.push(ev);
    children.push(r.child);
  }
  return { m, events, children };
}

function checkpointLog(s: ReturnType<typeof setup>, now: number, n: number): Envelope[] {
  const log = new CheckpointLog(s.held);
  for (let i = 0; i < n; i++) {
    log.checkpoint(s.agent, {
      state: addressOf({ i }),
      spent: { uj: BigInt(i), calls: i, wall_ms: 0 },
      at_ms: now + 2 * i,
    });
    log.amend(s.issuer, { uj: String(1_000_000_000_000 - i) }, now + 2 * i + 1);
  }
  return [...log.entries];
}

export default function standingBench(): Promise<void> {
  const now = Date.now();
  const s = setup(now);
  const env = s.held[0]!;
  const pk = s.issuer.publicKey;
  const msg = pae(env.payloadType, fromBase64(env.payload)!);
  const sig = fromBase64(env.signatures[0]!.sig)!;
  if (!ed25519.verify(pk, msg, sig))
    throw new Error("bench setup: the held grant's signature does not verify");
  const cache = new GrantCache();
  const ledger = mintAll(s, now, N, cache);
  const input = {
    policy: s.policy,
    held: s.held,
    entries: [...ledger.m.entries],
    events: ledger.events,
    children: ledger.children,
  };
  const log = checkpointLog(s, now, N / 2);
  const subjects: [string, () => void, number][] = [
    ["Ed25519 verify (anchor)", () => ed25519.verify(pk, msg, sig), N * 5],
    ["DSSE open of one grant envelope", () => void openEnvelope(env, { payloadType: env.payloadType }), N],
    ["mint (held chain re-verified each time)", () => void mintAll(s, now, N), N],
    ["mint (held chain cached)", () => void mintAll(s, now, N, cache), N],
    ["mint-ledger verification, per entry", () => void verifyMintLedger(input), N],
    ["checkpoint-log replay, per entry", () => void CheckpointLog.replay(s.held, log), log.length],
  ];
  const times: number[][] = subjects.map(() => []);
  for (let r = 0; r < RUNS; r++)
    subjects.forEach(([, fn, per], i) => {
      const reps = i <= 1 ? per : 1;
      const t = process.hrtime.bigint();
      for (let k = 0; k < reps; k++) fn();
      times[i]!.push(Number(process.hrtime.bigint() - t) / 1e9 / per);
    });
  const perSec = times.map((xs) => 1 / median(xs));
  const anchor = perSec[0]!;
  console.log(
    `standing grants: ${N}-entry mint ledger, ${log.length}-entry checkpoint log; medians of ${RUNS} runs:`,
  );
  subjects.forEach(([name], i) =>
    row(name, rate(perSec[i]!), i === 0 ? undefined : perSec[i]! / anchor, "Ed25519 verify rate"),
  );
  const us = (i: number) => `${(1e6 / perSec[i]!).toFixed(1)} µs`;
  console.log(
    `  per mint ${us(3)} (held chain cached) / ${us(2)}; per ledger entry ${us(4)}; per log entry ${us(5)}; Ed25519 verify ${us(0)}; DSSE open ${us(1)}`,
  );
  return Promise.resolve();
}
