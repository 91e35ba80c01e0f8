// What an auditor sees (issue 38; report-auditor.test.ts runs it in Chromium,
// report-auditor-firefox.test.ts in Firefox), on a run made with nothing but the CLI (cli-run.ts):
// an ungranted VALID run has no red on its page and says it had no grants; a run resumed without
// --key on the same host is VALID trusting only the key it was started with; the energy chart's
// axis labels and a hover value are read back from the DOM and checked against the record's own
// figures; trusting another key, every segment still shows its time and kind, marked unverified.
// Screenshots are kept in ARTIFACTS (printed when the suite starts).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import { FileStore } from "@sbx/host/store";
import { sbx } from "../lifecycle-helpers.ts";
import {
  ARTIFACTS,
  attr,
  count,
  launch,
  openReport,
  reds,
  shot,
  text,
  textContents,
  texts,
  waitVerified,
  type BrowserName,
  type Session,
  type Tab,
} from "./browser.ts";
import { ungrantedCliRun, type CliRun } from "./cli-run.ts";

let session: Session | undefined;
let page: Tab;
let run: CliRun;
let file: string;

function segments() {
  const bytes = readFileSync(FileStore.open(run.store, { readOnly: true }).recordPath(run.id));
  return decodeRecord(bytes).record.segments;
}

/** The idle energy of each resumed segment, as the record states it (by segment number). */
function idleFigures(): Map<number, bigint> {
  const idle = new Map<number, bigint>();
  segments().forEach((s, i) => s.kind === "resumed" && idle.set(i + 1, BigInt(s.idle_uj)));
  return idle;
}

/** The energy of each executed segment, as `sbx show --json` reports its attestation's. */
async function activeFigures(): Promise<Map<number, bigint>> {
  const r = await sbx(["show", run.id, "--store", run.store, "--json"]);
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out) as { attestations: { address: string; energy: { total_uj: string } }[] };
  const out = new Map<number, bigint>();
  segments().forEach((s, i) => {
    if (s.kind !== "executed") return;
    const a = j.attestations.find((x) => x.address === s.attestation);
    assert.ok(a, `sbx show lists the attestation of segment ${i + 1}`);
    out.set(i + 1, BigInt(a.energy.total_uj));
  });
  return out;
}

const UNIT = { µJ: 1, mJ: 1e3, J: 1e6, kJ: 1e9, MJ: 1e12 } as const;

/** microjoules reads a readable figure ("2.13 J") back into µJ. */
function microjoules(figure: string): number {
  const m = /^(\d+(?:\.\d+)?) (µJ|mJ|J|kJ|MJ)$/.exec(figure);
  assert.ok(m, `${figure} is a number and a unit of joules`);
  return Number(m[1]) * UNIT[m[2] as keyof typeof UNIT];
}

/** auditorSuite registers issue 38's browser tests for one browser. */
export function auditorSuite(name: BrowserName): void {
  before(async () => {
    console.log(`# screenshots of the report tests: ${ARTIFACTS}`);
    session = await launch(name);
    page = session.tab;
    run = await ungrantedCliRun();
    file = join(run.dir, "report.html");
    const r = await sbx(["report", run.id, "--store", run.store, "--trust", run.key.pub, "--out", file]);
    assert.equal(r.code, 0, r.err);
  });
  after(async () => {
    await session?.close();
  });
  test(
    `${name}: an ungranted run resumed without --key: VALID trusting the key it started with, no red, no grants`,
    ungranted,
  );
  test(
    `${name}: the energy chart: axes labelled in joules, a hover value, the table beside it, idle on its own scale`,
    chart,
  );
  test(
    `${name}: trusting another key, every segment still shows its time and kind, marked unverified`,
    unverified,
  );
}

async function ungranted(): Promise<void> {
  assert.match(
    run.resumeErr,
    new RegExp(`signed by ${run.key.did}`),
    "the resume names the key it signs with",
  );
  const o = await openReport(page, file);
  assert.deepEqual(o.errors, []);
  assert.equal(o.verdict, "VALID", `trusting ${run.key.did} alone: ${o.code}`);
  assert.equal(await text(page, "#grants-verdict"), "no grants: this run was not governed by a grant");
  assert.equal(await attr(page, "#grants-verdict", "data-state"), "none");
  assert.deepEqual(await reds(page), [], "nothing on the page is drawn in red");
  for (const bad of ["tr.state-invalid", "tr.bad", ".code", ".bad-text", ".verdict.invalid"])
    assert.equal(await count(page, bad), 0, `no ${bad}`);
  await shot(page, "auditor-ungranted");
  assert.match(
    run.resumeErr,
    new RegExp(`signed by ${run.key.did}`),
    "the resume names the key it signs with",
  );
  // sbx show says the same.
  const show = await sbx(["show", run.id, "--store", run.store]);
  assert.equal(show.code, 0, show.err);
  assert.match(show.out, /^no grants: this run was not governed by a grant$/m);
}

async function chart(): Promise<void> {
  await openReport(page, file);
  const active = await activeFigures();
  const idle = idleFigures();
  assert.deepEqual(await textContents(page, "#energy .axis-title"), [
    "active energy per executed segment (joules)",
    "idle energy while parked (joules)",
  ]);
  const ticks = await textContents(page, "#energy .axis-label");
  assert.ok(ticks.length >= 4, `ticks: ${ticks.join(", ")}`);
  const top = Math.max(...ticks.map(microjoules));
  const most = Math.max(...[...active.values()].map(Number));
  assert.ok(top >= most && top <= most * 2.5, `the axis (to ${top} µJ) covers the largest bar (${most} µJ)`);
  // The hover note of the first executed segment: its exact figure, and the same in readable units.
  await page.hover('#energy .segbar[data-n="1"]');
  await page.waitFor(() => document.getElementById("energy-tip")?.hidden === false, 5000);
  const tip = await text(page, "#energy-tip");
  const want = active.get(1)!;
  const m = new RegExp(`^#1 executed: (\\S+ \\S+) \\(${want} µJ\\)`).exec(tip);
  assert.ok(m, `hover: ${tip}; want ${want} µJ`);
  assert.ok(Math.abs(microjoules(m[1]!) - Number(want)) <= Number(want) * 0.005, `${m[1]} ≈ ${want} µJ`);
  await shot(page, "auditor-energy-hover");
  // The idle segments: on their own scale, so the largest is drawn tall however small it is.
  const idleMost = [...idle.entries()].reduce((a, b) => (b[1] > a[1] ? b : a));
  assert.ok(idleMost[1] > 0n, "the frozen park used idle energy");
  const h = await page.evaluate(
    (n) =>
      Array.from(
        document.querySelectorAll<SVGRectElement>(`#energy .segbar.idle[data-n="${n}"] rect.bar`),
        (r) => r.height.baseVal.value,
      ).reduce((a, b) => a + b, 0),
    idleMost[0],
  );
  assert.ok(h > 40, `the largest idle bar is ${h} of 176 units tall`);
  await page.hover(`#energy .segbar.idle[data-n="${idleMost[0]}"]`);
  assert.match(await text(page, "#energy-tip"), new RegExp(`idle while parked.*\\(${idleMost[1]} µJ\\)`));
  // The table beside it: one row per bar, the exact figures.
  const rows = await page.evaluate(
    () =>
      Array.from(
        document.querySelectorAll<HTMLElement>("#energy-table tbody tr"),
        (r) => [r.dataset["n"] ?? "", r.querySelector(".total")?.textContent ?? ""] as const,
      ),
    null,
  );
  const expected = [
    ...[...active].map(([n, v]) => [n, v] as const),
    ...[...idle].map(([n, v]) => [n, v] as const),
  ]
    .sort((a, b) => a[0] - b[0])
    .map(([n, v]) => [String(n), v]);
  assert.equal(rows.length, expected.length);
  rows.forEach(([n, t], i) => {
    assert.equal(n, expected[i]![0]);
    assert.ok(t.endsWith(` ${expected[i]![1]} µJ`), `row #${n}: ${t}`);
  });
  assert.equal((await texts(page, ".energy-figures")).length, 1);
}

async function unverified(): Promise<void> {
  await openReport(page, file);
  await page.click("#trust-box summary");
  await page.fill("#trust", "did:key:z6MkfCFXAvm1YLwCcsB5WQbQd4WaExPTpVxt46yrNuZrD6bw");
  await page.click("#reverify");
  await waitVerified(page);
  assert.equal(await attr(page, "#verdict", "data-code"), "HostMismatch");
  const rows = await page.evaluate(
    () =>
      Array.from(document.querySelectorAll<HTMLElement>("#segments tbody tr"), (r) => [
        r.children[1]?.textContent ?? "",
        r.querySelector("td.time")?.textContent ?? "",
      ]),
    null,
  );
  assert.deepEqual(
    rows.map((r) => r[0]),
    ["executed", "suspended", "resumed", "executed", "suspended", "resumed", "executed", "closed"],
  );
  for (const [kind, time] of rows) {
    assert.match(time!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/, `${kind}: ${time}`);
    if (kind === "executed") assert.match(time!, /unverified$/, `${kind}: ${time}`);
  }
  assert.equal(await count(page, "#timeline .seg-executed"), 3, "the executed intervals are on the timeline");
  await shot(page, "auditor-unverified");
}
