// The two-host scenario (issue 18, "must show") on hosts made by twohost.ts:
//   1. a run started on host A, suspended with --release, resumed and finished on host B, closed;
//      `sbx verify` from either host with both host keys trusted;
//   2. 1,000 resume attempts of one parked run, 500 from each namespace at once;
//   3. 8 metering hosts in each namespace spending 1 J 10 times each on one 120 J grant.
// Returns what happened; the faults test asserts it, the demo prints it.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { addressOf, testKey, type Digest, type Envelope } from "@sbx/wire";
import { issueGrant } from "@sbx/jcp-grant/grant";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import { PgStore } from "@sbx/host/pg";
import { replayLedger } from "@sbx/host/ledger";
import { fileIs, FINISH_AGENT, runIdOf, waitFor, workspaceWithAgent } from "./lifecycle-helpers.ts";
import { sbxOn, workerOn, type Host, type Ran, type TwoHosts } from "./twohost.ts";

/** Spends per metering host: 16 × 10 = 160 attempts on a 120 J budget. */
export const EACH = 10;

/** What the scenario saw. */
export interface TwoHostResult {
  readonly lifecycle: {
    readonly id: Digest;
    readonly kinds: string[];
    readonly keys: [string, string];
    readonly verifyA: Ran;
    readonly verifyB: Ran;
    readonly verifyOnlyA: Ran;
  };
  readonly resume: { readonly tally: Record<string, number>; readonly kinds: string[] };
  readonly spend: {
    readonly tally: Record<string, number>;
    readonly receipts: number;
    readonly spentUj: bigint;
    readonly budgetUj: bigint;
  };
}

function must(r: Ran, what: string): Ran {
  if (r.code !== 0) throw new Error(`${what} exited ${String(r.code)}: ${r.err}${r.out}`);
  return r;
}

async function record(url: string, id: Digest) {
  const s = await PgStore.open(url);
  try {
    const bytes = await s.readRecordBytes(id);
    if (bytes === null) throw new Error(`no record ${id}`);
    return decodeRecord(bytes).record;
  } finally {
    await s.close();
  }
}

/** parkOn starts the agent as a detached run on `h`, waits for step 2 and parks it with --release. */
async function parkOn(h: Host, ws: string): Promise<Digest> {
  workspaceWithAgent(ws);
  const r = must(await sbxOn(h, ["run", "--detach", "--workspace", ws, "--", "/work/agent.sh"]), "sbx run");
  const id = runIdOf(r.out);
  await waitFor(() => fileIs(join(ws, "state")) === "2", "the agent at step 2");
  must(await sbxOn(h, ["suspend", id, "--release"]), "sbx suspend --release");
  return id;
}

/** runScenario runs the three parts; `say` hears each step. */
export async function runScenario(t: TwoHosts, say: (l: string) => void): Promise<TwoHostResult> {
  const admin = t.cluster?.url;
  if (admin === undefined) throw new Error("the hosts are not set up");
  must(await sbxOn(t.a, ["store", "init"]), "sbx store init");

  // 1. A → B
  const id = await parkOn(t.a, join(t.dir, "ws-a"));
  say(`host A: run ${id} started, suspended with --release`);
  must(await sbxOn(t.b, ["resume", id, ...FINISH_AGENT]), "sbx resume on B");
  say("host B: resumed from the database's snapshot, the agent finished steps 3–5");
  must(await sbxOn(t.b, ["close", id]), "sbx close on B");
  const keyA = join(t.a.local, "host-key.pub.pem");
  const keyB = join(t.b.local, "host-key.pub.pem");
  const both = ["verify", id, "--trust", keyA, "--trust", keyB];
  const verifyA = await sbxOn(t.a, both);
  const verifyB = await sbxOn(t.b, both);
  const verifyOnlyA = await sbxOn(t.b, ["verify", id, "--trust", keyA]);
  const rec = await record(admin, id);
  say(`sbx verify from A: exit ${String(verifyA.code)}; from B: exit ${String(verifyB.code)}`);

  // 2. the resume race on a second parked run
  const parkedId = await parkOn(t.a, join(t.dir, "ws-race"));
  const parked = await record(admin, parkedId);
  const snap = parked.parkedSnapshot;
  if (snap === null) throw new Error("the race run is not parked");
  const go = join(t.dir, "resume-go");
  const last = parked.segments[parked.segments.length - 1];
  const atMs = String((last?.kind === "suspended" ? last.at_ms : Date.now()) + 1);
  const racers = [t.a, t.b].map((h) =>
    workerOn(
      h,
      join(import.meta.dirname, "..", "..", "host", "test", "pg", "resume-worker.ts"),
      [h.url, parkedId, parked.head, go, "500", "twohost-race", atMs],
      { SBX_RACE_SNAPSHOT: JSON.stringify(snap) },
    ),
  );
  await Promise.all(racers.map((w) => w.ready));
  writeFileSync(go, "");
  const resumeTally: Record<string, number> = {};
  for (const x of await Promise.all(racers.map((w) => w.done)))
    for (const [k, n] of Object.entries(x)) resumeTally[k] = (resumeTally[k] ?? 0) + n;
  const raced = await record(admin, parkedId);
  say(`resume race: ${JSON.stringify(resumeTally)}`);

  // 3. the spend race: 8 metering hosts in each namespace
  const writers = 16;
  const budgetJ = 120;
  const root = testKey("spend-root");
  const grant: Envelope = issueGrant(root, {
    holder: testKey("spend-alice").did,
    resources: ["/fs/work/**"],
    actions: ["read"],
    uj: String(budgetJ * 1_000_000),
    exp_ms: Date.now() + 86_400_000,
    depth: 0,
  });
  const chainFile = join(t.dir, "chain.json");
  writeFileSync(chainFile, JSON.stringify([grant]));
  const name = "spend/twohost";
  const spendGo = join(t.dir, "spend-go");
  const spenders = Array.from({ length: writers }, (_, i) => {
    const h = i % 2 === 0 ? t.a : t.b;
    return workerOn(h, join(import.meta.dirname, "pg-spend-worker.ts"), [
      h.url,
      name,
      chainFile,
      spendGo,
      String(EACH),
      String(i),
      String(writers),
    ]);
  });
  await Promise.all(spenders.map((w) => w.ready));
  writeFileSync(spendGo, "");
  const spendTally: Record<string, number> = {};
  for (const x of await Promise.all(spenders.map((w) => w.done)))
    for (const [k, n] of Object.entries(x)) spendTally[k] = (spendTally[k] ?? 0) + n;
  const store = await PgStore.open(admin);
  let receipts: number;
  let spentUj: bigint;
  try {
    const hosts = Array.from({ length: writers }, (_, i) => testKey(`spend-host-${String(i)}`).did);
    const ledger = await replayLedger(store.logs, name, { roots: [root.did], hosts });
    receipts = ledger.receipts.length;
    const payload = JSON.parse(Buffer.from(grant.payload, "base64").toString("utf8")) as unknown;
    spentUj = ledger.used(addressOf(payload)).uj;
  } finally {
    await store.close();
  }
  say(
    `spend race: ${JSON.stringify(spendTally)}; ledger verifies, ${String(receipts)} receipts, ${String(spentUj)} µJ of ${String(budgetJ * 1_000_000)}`,
  );

  return {
    lifecycle: {
      id,
      kinds: rec.segments.map((s) => s.kind),
      keys: [keyA, keyB],
      verifyA,
      verifyB,
      verifyOnlyA,
    },
    resume: { tally: resumeTally, kinds: raced.segments.map((s) => s.kind) },
    spend: { tally: spendTally, receipts, spentUj, budgetUj: BigInt(budgetJ * 1_000_000) },
  };
}
