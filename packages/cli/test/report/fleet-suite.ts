// `sbx report FLEET.json`, opened in a headless browser (issue 19, §16; report-fleet.test.ts runs it
// in Chromium, report-fleet-firefox.test.ts in Firefox): the receipt verified in the
// page, items by energy, a membership proof made and checked in the page for a picked item, a
// changed proof refused with the code `sbx fleet verify` gives; and on every fleet.verify_membership
// case of vectors/durable.json the page and `sbx fleet verify` agree (and agree with the vector).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import { buildFleet, signFleetReceipt, type FleetItem } from "@sbx/sandbox-attest/fleet";
import { runCli } from "../../src/main.ts";
import {
  attr,
  count,
  launch,
  openReport,
  shot,
  textContents,
  type BrowserName,
  type Session,
  type Tab,
} from "./browser.ts";

const HOST = testKey("host");
let session: Session | undefined;
let page: Tab;
let dir: string;

/** fleetSuite registers the fleet report's browser tests for one browser. */
export function fleetSuite(name: BrowserName): void {
  before(async () => {
    session = await launch(name);
    page = session.tab;
    dir = mkdtempSync(join(tmpdir(), "sbx-report-fleet-"));
  });
  after(async () => {
    await session?.close();
  });
  test(
    `${name}: the fleet view: items by energy, a picked item's proof verified in the page, a changed one refused`,
    fleetView,
  );
  test(
    `${name}: vectors/durable.json fleet.verify_membership: the page agrees with sbx fleet verify on every case`,
    vectorCases,
  );
}

async function sbx(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/**
 * says: does `sbx fleet verify` agree with `code` ("ok", or the page's refusal)? Exit 0 for "ok";
 * else exit 1 or 2 and its one error line led by that code (errorExit: `sbx fleet verify: CODE: …`). The
 * code is compared where the line states it, never parsed out of the text.
 */
function says(r: { code: number; err: string }, code: string): boolean {
  return code === "ok" ? r.code === 0 : r.code !== 0 && r.err.startsWith(`sbx fleet verify: ${code}: `);
}

async function report(file: string, trust: readonly string[]): Promise<string> {
  const out = file.replace(/\.json$/, ".html");
  const r = await sbx(["report", file, "--out", out, ...trust.flatMap((t) => ["--trust", t])]);
  assert.equal(r.code, 0, r.err);
  return out;
}

/** checkPasted pastes a proof into the page, checks it there, and returns the page's code. */
async function checkPasted(proof: string): Promise<string> {
  await page.fill("#proof", proof);
  await page.click("#check-proof");
  return (await attr(page, "#proof-verdict", "data-verdict")) === "VALID"
    ? "ok"
    : ((await attr(page, "#proof-verdict", "data-code")) ?? "?");
}

async function fleetView(): Promise<void> {
  const items: FleetItem[] = Array.from({ length: 9 }, (_, i) => ({
    item: `unit-${i}`,
    head: addressOf({ run: i }),
    energy_uj: String(((i * 7919) % 50_000) + 1000),
    outcome: i === 4 ? "failed" : "completed",
  }));
  const receipt = signFleetReceipt(buildFleet(items), HOST, {
    fleet: "nightly",
    start_ms: 1_700_000_000_000,
    end_ms: 1_700_000_900_000,
  });
  const file = join(dir, "fleet.json");
  writeFileSync(file, JSON.stringify({ receipt, items }, null, 2));
  const o = await openReport(page, await report(file, [HOST.did]));
  assert.deepEqual(o.fetched, []);
  assert.deepEqual(o.errors, []);
  assert.equal(o.verdict, "VALID");
  const labels = await textContents(page, "#fleet-bars .hbar text:first-child");
  const sorted = [...items].sort((a, b) => Number(b.energy_uj) - Number(a.energy_uj)).map((i) => i.item);
  assert.deepEqual(labels, sorted, "bars sorted by energy, largest first");
  await page.select("#item", "5");
  await page.click("#prove");
  assert.equal(await attr(page, "#proof-verdict", "data-verdict"), "VALID");
  const proof = await page.value("#proof");
  const proofFile = join(dir, "proof.json");
  writeFileSync(proofFile, proof);
  const valid = await sbx(["fleet", "verify", file, proofFile, "--trust", HOST.did]);
  assert.ok(says(valid, "ok"), valid.err);
  await shot(page, "fleet-valid");
  // The item's energy lowered by one microjoule: refused in the page and by sbx fleet verify alike.
  const changed = proof.replace(
    `"energy_uj": "${items[5]!.energy_uj}"`,
    `"energy_uj": "${Number(items[5]!.energy_uj) - 1}"`,
  );
  assert.notEqual(changed, proof);
  writeFileSync(proofFile, changed);
  const pageCode = await checkPasted(changed);
  const cli = await sbx(["fleet", "verify", file, proofFile, "--trust", HOST.did]);
  assert.notEqual(pageCode, "ok");
  assert.ok(says(cli, pageCode), `page ${pageCode}, sbx fleet verify: ${cli.err}`);
  await shot(page, "fleet-refused");
  // Clicking a bar makes and checks that item's proof.
  assert.equal(await count(page, '#fleet-bars .hbar[data-key="2"]'), 1);
  await page.click('#fleet-bars .hbar[data-key="2"]');
  assert.equal(await attr(page, "#proof-verdict", "data-verdict"), "VALID");
  assert.match(await page.value("#proof"), /"item": "unit-2"/);
}

interface Vector {
  readonly id: string;
  readonly op: string;
  readonly input: { receipt: unknown; hosts: string[]; proof: unknown };
  readonly expect: "ok" | { error: string };
}

async function vectorCases(): Promise<void> {
  const all = (
    JSON.parse(readFileSync(join(import.meta.dirname, "../../../../vectors/durable.json"), "utf8")) as {
      vectors: Vector[];
    }
  ).vectors;
  const cases = all.filter((v) => v.op === "fleet.verify_membership");
  assert.ok(cases.length >= 30, `got ${cases.length} cases`);
  for (const [i, v] of cases.entries()) {
    const receipt = join(dir, `${v.id}.json`);
    const proof = join(dir, `${v.id}.proof`);
    writeFileSync(receipt, JSON.stringify(v.input.receipt));
    writeFileSync(proof, JSON.stringify(v.input.proof));
    // An empty trust set: the command line says --any-signer and the page has no key; both check
    // every signature and trust nobody (UNTRUSTED), which is the vector's refusal of every signer.
    const trust = v.input.hosts.length ? v.input.hosts.flatMap((h) => ["--trust", h]) : ["--any-signer"];
    const cli = await sbx(["fleet", "verify", receipt, proof, "--json", ...trust]);
    await openReport(page, await report(receipt, v.input.hosts));
    const pageCode = await checkPasted(JSON.stringify(v.input.proof));
    assert.ok(
      says(cli, pageCode),
      `case ${i} ${v.id}: page ${pageCode}, sbx fleet verify: ${cli.code} ${cli.err}`,
    );
    const want = v.expect === "ok" ? "ok" : v.expect.error;
    if (v.input.hosts.length === 0) {
      assert.equal(want, "UnknownSigner", `case ${i}`);
      assert.equal((JSON.parse(cli.out) as { trusted: boolean }).trusted, false, `case ${i}: CLI UNTRUSTED`);
      assert.equal(await attr(page, "#verdict", "data-verdict"), "UNTRUSTED", `case ${i}: page UNTRUSTED`);
    } else assert.equal(pageCode, want, `case ${i} ${v.id}: page ${pageCode}, vector ${want}`);
  }
}
