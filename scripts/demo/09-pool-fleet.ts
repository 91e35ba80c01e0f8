// Demo part 9: warm pools (§15) and fleet records (§16). A pool of real pre-provisioned sandboxes
// (workspaces and stopped idle processes) accrues idle energy; a claim starts a run fast and its
// first receipt shows the joule price of that fast start; an eviction is overhead, never zero; the
// ledger verifies and conserves. Then a small fleet of real units runs, its records become a signed
// fleet receipt, one member is proved (log-size proof, energy counted in the total), a tampered
// proof is refused, and a grown fleet is shown to have only appended.
import { createPrivateKey } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addressOf, signPayload, testKey } from "@sbx/wire";
import {
  appendEntry,
  evictBody,
  POOL_ENTRY_PAYLOAD_TYPE,
  verifyLedger,
  type EntryBody,
  type LedgerState,
} from "@sbx/sandbox-attest/warmpool";
import {
  claimPoolItem,
  closePoolDir,
  createPoolDir,
  evictPoolItem,
  listPool,
  openPoolDir,
  residencyFigure,
  runClaimed,
  diskBytes,
} from "@sbx/host/pool";
import { runUnit } from "@sbx/host/run";
import { FileStore } from "@sbx/host/store";
import { runCli } from "@sbx/cli";
import { check, type DemoContext } from "./context.ts";

const host = testKey("host");
const manifest = addressOf({ demo: "09 pool manifest" });
const policy = addressOf({ demo: "no exec policy" });
const b64url = (b: Uint8Array): string => Buffer.from(b).toString("base64url");
const J = (uj: string | bigint): string => `${(Number(uj) / 1e6).toFixed(6)} J`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function cli(ctx: DemoContext, args: string[], show = true): Promise<{ code: number; out: string[] }> {
  const out: string[] = [];
  const code = await runCli("sbx", args, { out: (l) => out.push(l), err: (l) => out.push(l) });
  if (show)
    for (const l of out)
      for (const s of l.split("\n").slice(0, 12)) ctx.say(`  ${s.replaceAll(ctx.work, "$WORK")}`);
  return { code, out };
}

async function pool(ctx: DemoContext): Promise<void> {
  const dir = join(ctx.work, "pool9");
  await createPoolDir(dir, { name: "demo", manifest, size: 3, key: host });
  await sleep(1500);
  ctx.say("pool of 3 created; after 1.5 s idle:");
  for (const it of listPool(dir).items)
    ctx.say(`  ${it.item}: idle pid ${it.idle_pid ?? "-"} (stopped), accrued ${J(it.accrued_now_uj)}`);
  const unit = addressOf({ demo: "09 claiming unit" });
  const grants = addressOf({ demo: "09 grants" });
  const c = claimPoolItem(dir, { unit, grants, key: host });
  const run = await runClaimed(c, ["sh", "-c", "echo fast start > out.txt; cat out.txt"], host);
  const wp = run.receipt.components.filter((x) => x.domain === "warmpool");
  ctx.say(
    `claimed ${c.claim.item}; the run printed ${JSON.stringify(run.stdout.trim())} in the pre-created workspace`,
  );
  ctx.say(
    `joule price of the fast start: ${J(c.claim.accrued_uj)} = provisioning ${J(c.claim.provision_uj)} + residency ${J(c.claim.residency_uj)}`,
  );
  for (const x of wp)
    ctx.say(
      `  warmpool component in the run's first receipt: ${x.uj} µJ ${x.provenance} (${x.provenance === "estimated" ? x.model.name : x.source})`,
    );
  check(
    wp.reduce((a, x) => a + BigInt(x.uj), 0n) === BigInt(c.claim.accrued_uj) && run.receipt.seq === 0,
    "first receipt carries the whole claim",
  );
  check(BigInt(c.claim.residency_uj) > 0n, "residency is charged, not only provisioning");
  const ev = evictPoolItem(dir, "item-0001", "expired", host).payloads.at(-1);
  check(ev?.kind === "evicted" && BigInt(ev.overhead_uj) > 0n, "eviction overhead is not zero");
  ctx.say(`evicted item-0001: overhead ${J(ev.overhead_uj)}`);
  // A dishonest host signs an eviction of item-0002 at zero overhead: the ledger is refused.
  const forged = openPoolDir(dir);
  const acc = accrual(dir, forged, "item-0002");
  appendEntry(forged, acc, host);
  const zero = {
    ...evictBody(forged, "item-0002", "expired"),
    overhead_uj: "0",
    provision_uj: "0",
    residency_uj: "0",
  };
  const entry = { ...zero, seq: forged.entries.length, prev: forged.head };
  const ledger = {
    pool: forged.pool,
    entries: [...forged.entries, signPayload(POOL_ENTRY_PAYLOAD_TYPE, entry, host)],
  };
  ctx.say(
    `an eviction signed by the host but recorded as zero: ${refusedCode(() => verifyLedger(ledger), "ZeroEnergy")}`,
  );
  closePoolDir(dir, host);
  const s = openPoolDir(dir);
  const sum = verifyLedger({ pool: s.pool, entries: s.entries }, { requireClosed: true, hosts: [host.did] });
  check(BigInt(sum.drawn_uj) === BigInt(sum.claimed_uj) + BigInt(sum.evicted_uj), "conservation");
  ctx.say(
    `closed ledger verified (${sum.entries} signed entries): drawn ${J(sum.drawn_uj)} = claimed ${J(sum.claimed_uj)} + evicted ${J(sum.evicted_uj)}`,
  );
  check(
    (await cli(ctx, ["pool", "verify", dir, "--closed", "--trust", host.did], false)).code === 0,
    "sbx pool verify accepts it",
  );
}

/** accrual measures item's residency up to now the way the host does (one estimated storage term here). */
function accrual(dir: string, s: LedgerState, item: string): EntryBody {
  const it = s.account.items.get(item);
  const from = it?.accounted_to_ms ?? 0;
  const to = Math.max(Date.now(), s.account.last_ms, from + 1);
  return {
    kind: "accrued",
    item,
    from_ms: from,
    to_ms: to,
    residency: residencyFigure({
      ms: to - from,
      rss: 1n << 20n,
      storage: diskBytes(join(dir, "items", item)),
      cpu_us: 0n,
    }),
  };
}

function refusedCode(f: () => unknown, code: string): string {
  try {
    f();
  } catch (e) {
    const got = (e as { code?: string }).code ?? "?";
    check(got === code, `refused with ${code} (got ${got})`);
    return `refused (${got})`;
  }
  throw new Error(`demo check failed: must be refused with ${code}`);
}

async function runFleetUnit(store: FileStore, i: number): Promise<void> {
  const unitDescriptor = { demo: "09 fleet unit", i };
  const unit = addressOf(unitDescriptor);
  const grants = addressOf({ demo: "09 fleet grants" });
  const ws = join(store.root, "..", `ws9-${i}`);
  mkdirSync(ws, { recursive: true });
  const id = await store.createRecord(unit, grants);
  const r = await runUnit({
    argv: ["sh", "-c", `i=0; while [ $i -lt ${2000 * (i + 1)} ]; do i=$((i+1)); done; echo item ${i} done`],
    cwd: ws,
    hostKey: host,
    unitId: unit,
    unit: unitDescriptor,
    grantsId: grants,
    manifest,
    policy,
    maxLevel: "S0", // a plain process: no §5 isolation, so no higher level may be stated (§9)
    runHead: id,
  });
  await store.putSigned(r.receipt.envelope);
  const att = await store.putSigned(r.attestation);
  const head = await store.appendSegment(id, id, { kind: "executed", attestation: att });
  await store.appendSegment(id, head, {
    kind: "closed",
    at_ms: Date.now(),
    outcome: r.outcome.status === "exited" && r.outcome.exit_code === 0 ? "completed" : "failed",
  });
}

async function fleet(ctx: DemoContext): Promise<void> {
  const root = join(ctx.work, "fleet9");
  const store = FileStore.open(join(root, "store"), { create: true });
  const keyFile = join(root, "host.pem");
  // The host's key as `sbx keygen` writes one: PKCS#8 PEM, mode 0600.
  const jwk = { kty: "OKP", crv: "Ed25519", d: b64url(host.seed), x: b64url(host.publicKey) };
  const pem = createPrivateKey({ key: jwk, format: "jwk" }).export({ type: "pkcs8", format: "pem" });
  writeFileSync(keyFile, pem, { mode: 0o600 });
  for (let i = 0; i < 5; i++) await runFleetUnit(store, i);
  ctx.say("5 real units ran (busy loops in sh), each recorded, attested and closed");
  const records = join(store.root, "records");
  const v1 = join(root, "fleet-5.json");
  check(
    (
      await cli(ctx, [
        "fleet",
        "build",
        records,
        "--key",
        keyFile,
        "--out",
        v1,
        "--name",
        "demo",
        "--trust",
        host.did,
      ])
    ).code === 0,
    "fleet build",
  );
  const f1 = JSON.parse(readFileSync(v1, "utf8")) as { items: { item: string; energy_uj: string }[] };
  const member = f1.items[3]?.item ?? "";
  const proofFile = join(root, "proof.json");
  const proved = await cli(ctx, ["fleet", "prove", v1, member, "--out", proofFile], false);
  const proof = JSON.parse(readFileSync(proofFile, "utf8")) as {
    path: unknown[];
    item: { energy_uj: string };
  };
  check(proved.code === 0 && proof.path.length <= Math.ceil(Math.log2(5)), "proof is log-size");
  ctx.say(`membership proof of ${member.slice(0, 16)}…: ${proof.path.length} nodes (⌈log₂ 5⌉ = 3)`);
  check(
    (await cli(ctx, ["fleet", "verify", v1, proofFile, "--trust", host.did])).code === 0,
    "proof verifies",
  );
  writeFileSync(
    proofFile,
    JSON.stringify({
      ...proof,
      item: { ...proof.item, energy_uj: String(BigInt(proof.item.energy_uj) - 1n) },
    }),
  );
  const bad = await cli(ctx, ["fleet", "verify", v1, proofFile, "--trust", host.did], false);
  check(bad.code === 1, "understated energy refused");
  ctx.say(
    `the same proof claiming 1 µJ less for the item: refused (${bad.out.join(" ").split(": ")[1] ?? "?"})`,
  );
  await runFleetUnit(store, 5);
  const v2 = join(root, "fleet-6.json");
  await cli(
    ctx,
    ["fleet", "build", records, "--key", keyFile, "--out", v2, "--name", "demo", "--trust", host.did],
    false,
  );
  const consProof = join(root, "consistency.json");
  const cons = await cli(ctx, ["fleet", "consistency", v1, v2, "--trust", host.did, "--out", consProof]);
  check(cons.code === 0, "the grown fleet only appended");
  const cp = JSON.parse(readFileSync(consProof, "utf8")) as { path: { hash: string; uj: string }[] };
  const off = cp.path.map((n, k) => (k === 0 ? { ...n, uj: String(BigInt(n.uj) + 1n) } : n));
  writeFileSync(consProof, JSON.stringify({ ...cp, path: off }));
  const badCons = await cli(
    ctx,
    ["fleet", "consistency", v1, v2, "--trust", host.did, "--proof", consProof],
    false,
  );
  check(badCons.code === 1, "a consistency proof with a sum off by one is refused");
  ctx.say(
    `the same consistency proof with one node's sum 1 µJ higher: refused (${badCons.out.join(" ").split(": ")[1] ?? "?"})`,
  );
}

export default async function poolFleet(ctx: DemoContext): Promise<void> {
  ctx.title("warm pools: a fast start has a visible joule price (§15)");
  await pool(ctx);
  ctx.title("fleet records: log-size membership proofs with energy sums (§16)");
  await fleet(ctx);
}
