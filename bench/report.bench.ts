// `sbx report` (issue 19): a 10,000-segment run record's report opened and verified in headless
// Chromium (and in Firefox ESR) against the anchor `sbx verify` on the same record and store, all
// measured in this run. Each interval's journal (4 events) is kept in the store as §13.7.3 nodes, so
// the page walks, checks and shows 3,333 journals; sbx verify walks and checks them too (item 6).
// The run: 3,333 cycles of executed (a signed attestation and a signed energy receipt, each with its
// own Ed25519 signature) → suspended → resumed (estimated idle energy), then closed; every park
// cites the same small snapshot. Target: the page opens and verifies in under 3× sbx verify.
// SBX_BENCH_REPORT_SEGMENTS changes the size (a multiple of 3, plus one for the close).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { addressOf, canonicalBytes, digestBytes, testKey, utf8 } from "@sbx/wire";
import { signAttestation } from "@sbx/sandbox-attest/attestation";
import { estimateCpu, makeReceipt, startEnergyChain, weakestProvenance } from "@sbx/sandbox-attest/energy";
import { encodeRecord, RunRecord, type SnapshotRef } from "@sbx/sandbox-attest/runrecord";
import { Journal, journalNodes } from "@sbx/sandbox-attest/journal";
import { FileStore } from "@sbx/host/store";
import { snapshotDir } from "@sbx/host/snapshot";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";
import { median, row, timeCommand } from "./measure.ts";

const UNIT_DESCRIPTOR = { bench: "report unit" };
const UNIT = addressOf(UNIT_DESCRIPTOR);
const GRANTS = digestBytes(utf8("bench-report-grants"));
const HOST = testKey("host");
const SBX = join(import.meta.dirname, "../packages/cli/bin/sbx.mjs");

function putRaw(path: string, bytes: Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
}

/** makeRun writes the record and its objects straight into a store (no fsync per object: a bench). */
function makeRun(dir: string, segments: number): { store: FileStore; path: string } {
  const store = FileStore.open(join(dir, "store"), { create: true });
  const ws = join(dir, "ws");
  mkdirSync(ws);
  writeFileSync(join(ws, "state.txt"), "parked state\n");
  const env = { image: `debian@sha256:${"c".repeat(64)}` };
  putRaw(store.objectPath(addressOf(env)), canonicalBytes(env));
  const snapshot: SnapshotRef = { fs_root: snapshotDir(store, ws).fs_root, manifest: addressOf(env) };
  const r = RunRecord.create(UNIT, GRANTS);
  let chain = startEnergyChain(UNIT, GRANTS);
  let t = 1_700_000_000_000;
  const cycles = Math.floor((segments - 1) / 3);
  for (let i = 0; i < cycles; i++) {
    const reading = {
      start_ms: t,
      end_ms: t + 50,
      components: [estimateCpu(BigInt(40_000 + i), { source: "cgroup2:cpu.stat" })],
      absent: ["rapl"],
    };
    const made = makeReceipt(chain, reading, HOST);
    // The interval's journal, kept as the durable host keeps it (§13.7.3): the nodes of its tree.
    const j = new Journal();
    j.append({ type: "process.start", pid: 100 + i, argv: ["agent", "step", String(i)], binary: GRANTS });
    j.append({ type: "file.write", path: `out/step-${i}.txt`, digest: GRANTS, size: String(i) });
    j.append({ type: "stdio.chunk", stream: "stdout", digest: GRANTS, length: "12" });
    j.append({ type: "process.exit", pid: 100 + i, code: 0, signal: null });
    for (const n of journalNodes(j.events)) putRaw(store.objectPath(n.address), n.bytes);
    const jh = j.head();
    chain = made.state;
    const receipt = addressOf(made.receipt);
    putRaw(store.signedPath(receipt), canonicalBytes(made.envelope));
    const att = signAttestation(
      {
        unit_id: UNIT,
        grants_id: GRANTS,
        manifest: snapshot.manifest,
        exec_policy: digestBytes(utf8("policy")),
        energy: {
          receipt,
          total_uj: made.receipt.total_uj,
          provenance: weakestProvenance(made.receipt.components),
        },
        journal: { root: jh.root, events: jh.size },
        outcome: { status: "exited", exit_code: 0 },
        interval: { start_ms: t, end_ms: t + 50 },
        level: "S5",
        run_head: r.head,
      },
      HOST,
      UNIT_DESCRIPTOR,
    );
    const address = addressOf(JSON.parse(Buffer.from(att.payload, "base64").toString()) as object);
    putRaw(store.signedPath(address), canonicalBytes(att));
    r.append({ kind: "executed", attestation: address });
    r.append({ kind: "suspended", snapshot, at_ms: t + 60 });
    r.append({
      kind: "resumed",
      snapshot,
      at_ms: t + 1000,
      idle_uj: "1250",
      idle_provenance: "estimated",
      idle_source: "model:ccf.storage/1",
      idle_basis: { mib_s: "1", uw_per_tib: "1250000" },
    });
    t += 1100;
  }
  r.append({ kind: "closed", at_ms: t, outcome: "completed" });
  const path = store.recordPath(r.genesis);
  putRaw(path, encodeRecord(r));
  return { store, path };
}

/** A browser's binary, or why the bench cannot use it (a missing browser skips its rows, said so). */
function browserBinary(env: string, fallback: string, what: string): { path: string } | { skipped: string } {
  const path = process.env[env] ?? fallback;
  return existsSync(path)
    ? { path }
    : { skipped: `${what}: skipped, no browser at ${path} (install it, or set ${env} to its binary)` };
}

interface Loads {
  readonly walls: number[];
  readonly inPage: number[];
  readonly engine: string;
}

/** Chromium through playwright-core: one warm-up and three loads of the page. */
async function chromiumLoads(executablePath: string, html: string): Promise<Loads> {
  const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
  try {
    const walls: number[] = [];
    const inPage: number[] = [];
    let engine = "";
    for (let i = 0; i < 4; i++) {
      const page = await browser.newPage();
      const t0 = process.hrtime.bigint();
      await page.goto(pathToFileURL(html).href);
      await page.waitForFunction(() => document.body.dataset["verified"] !== "", null, { timeout: 600_000 });
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      const o = await page.evaluate(
        () => (window as unknown as { sbxReport: { verdict: string; ms: number; engine: string } }).sbxReport,
      );
      if (o.verdict !== "VALID") throw new Error(`bench: the page says ${o.verdict}`);
      engine = o.engine;
      if (i > 0) {
        walls.push(wall);
        inPage.push(o.ms / 1000);
      }
      await page.close();
    }
    return { walls, inPage, engine };
  } finally {
    await browser.close();
  }
}

/** Firefox ESR through puppeteer-core over WebDriver BiDi: one warm-up and two loads. */
async function firefoxLoads(executablePath: string, html: string): Promise<Loads> {
  const ff = await puppeteer.launch({ browser: "firefox", executablePath, headless: true });
  try {
    const walls: number[] = [];
    let engine = "";
    for (let i = 0; i < 3; i++) {
      const page = await ff.newPage();
      const t0 = process.hrtime.bigint();
      await page.goto(pathToFileURL(html).href);
      await page.waitForFunction(() => document.body.dataset["verified"] !== "", {
        timeout: 600_000,
        polling: 50,
      });
      const w = Number(process.hrtime.bigint() - t0) / 1e9;
      const o = await page.evaluate(
        () => (window as unknown as { sbxReport: { verdict: string; engine: string } }).sbxReport,
      );
      if (o.verdict !== "VALID") throw new Error(`bench: Firefox's page says ${o.verdict}`);
      engine = o.engine;
      if (i > 0) walls.push(w);
      await page.close();
    }
    return { walls, inPage: [], engine };
  } finally {
    await ff.close();
  }
}

export default async function reportBench(): Promise<void> {
  const segments = Number(process.env["SBX_BENCH_REPORT_SEGMENTS"] ?? 10_000);
  const dir = mkdtempSync(join(tmpdir(), "sbx-bench-report-"));
  try {
    const { path } = makeRun(dir, segments);
    const html = join(dir, "report.html");
    const verify = timeCommand(3, process.execPath, [SBX, "verify", path, "--trust", HOST.did]);
    if (verify === null) {
      const r = spawnSync(process.execPath, [SBX, "verify", path, "--trust", HOST.did], { encoding: "utf8" });
      throw new Error(
        `bench: sbx verify does not exit 0 on the bench record: ${r.stdout.slice(-400)}${r.stderr}`,
      );
    }
    const report = timeCommand(1, process.execPath, [
      SBX,
      "report",
      path,
      "--trust",
      HOST.did,
      "--out",
      html,
    ]);
    if (report === null) throw new Error("bench: sbx report failed");
    console.log(
      `a ${segments}-segment record (${Math.floor((segments - 1) / 3)} signed attestations + as many signed receipts), median of 3:`,
    );
    row("sbx verify REC --trust (anchor, whole command)", `${verify.toFixed(3)} s`);
    const targets: string[] = [];
    const cr = browserBinary("SBX_CHROMIUM", "/usr/bin/chromium", "Chromium");
    if ("skipped" in cr) console.log(`  ${cr.skipped}`);
    else {
      const c = await chromiumLoads(cr.path, html);
      const wall = median(c.walls);
      row("page: open the report and verify (wall)", `${wall.toFixed(3)} s`, wall / verify, "sbx verify");
      row(
        "page: verification and drawing alone",
        `${median(c.inPage).toFixed(3)} s`,
        median(c.inPage) / verify,
        "sbx verify",
      );
      console.log(`  the page's Ed25519: ${c.engine}`);
      targets.push(`Chromium ${wall < 3 * verify ? "met" : "NOT met"} (${(wall / verify).toFixed(2)}×)`);
    }
    const fx = browserBinary("SBX_FIREFOX", "/usr/bin/firefox-esr", "Firefox ESR");
    if ("skipped" in fx) console.log(`  ${fx.skipped}`);
    else {
      const f = await firefoxLoads(fx.path, html);
      const ffWall = median(f.walls);
      row(
        "Firefox ESR: open the report and verify (wall)",
        `${ffWall.toFixed(3)} s`,
        ffWall / verify,
        "sbx verify",
      );
      console.log(`  Firefox's Ed25519: ${f.engine}`);
      targets.push(`Firefox ${ffWall < 3 * verify ? "met" : "NOT met"} (${(ffWall / verify).toFixed(2)}×)`);
    }
    row("sbx report REC (writing the page, once)", `${report.toFixed(3)} s`);
    console.log(
      `  target: page under 3× sbx verify: ${targets.length > 0 ? targets.join(", ") : "no browser here"}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
