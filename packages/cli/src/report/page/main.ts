/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The report page's script (issue 19), bundled for browsers by scripts/build.mjs (reportPage) and
// inlined into the HTML `sbx report` writes. It reads the embedded bytes, verifies them with the
// project's own wire and library code (checkRun, checkFleet), and draws only what it verified. The
// reader may replace the trusted keys and verify again; nothing is fetched.
import { isDidKey } from "@sbx/wire";
import { REPORT_FORMAT, type FleetBundle, type ReportBundle, type RunBundle } from "../bundle.ts";
import { checkFleet, checkMembershipJson, type FleetCheck } from "../fleetcheck.ts";
import { checkGrants } from "../grants.ts";
import { checkRun } from "../verify.ts";
import { fleetHtml, fleetVerdictHtml, proofVerdictHtml } from "./fleet.ts";
import { runHtml, verdictHtml } from "./run.ts";
import { verifyWithWebCrypto, type Engine } from "./webcrypto.ts";

/** What the page publishes for tests and benches once it has verified: the verdict and the time. */
interface Outcome {
  verdict: string;
  code: string;
  ms: number;
  engine: Engine | "";
}

const $ = (id: string): HTMLElement => {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`page: no #${id}`);
  return el;
};

function readBundle(): ReportBundle {
  const b = JSON.parse($("sbx-data").textContent) as { format?: unknown };
  if (b.format !== REPORT_FORMAT) throw new Error(`page: data is not ${REPORT_FORMAT}`);
  return b as ReportBundle;
}

/** trustFromBox reads the trust box: did:keys, one per line; anything else is reported, not used. */
function trustFromBox(): string[] {
  const lines = ($("trust") as HTMLTextAreaElement).value
    .split(/\s+/)
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const bad = lines.filter((l) => !isDidKey(l));
  $("trust-note").textContent = bad.length ? `not a did:key, ignored: ${bad.join(", ")}` : "";
  return lines.filter((l) => isDidKey(l));
}

function publish(o: Outcome): void {
  (window as unknown as { sbxReport: Outcome }).sbxReport = o;
  document.body.dataset["verified"] = o.verdict;
}

function engineNote(engine: Engine): void {
  $("engine").textContent =
    `Ed25519 equations answered by ${engine === "webcrypto" ? "the browser's WebCrypto" : "@noble/curves"}, after the §2.4 encoding checks; BLAKE3 by the project's JavaScript and hash-wasm.`;
}

/** energyHover shows a bar's values (its data-tip) beside the pointer, or under the chart on focus. */
function energyHover(): void {
  const tip = document.getElementById("energy-tip");
  const chart = tip?.parentElement;
  if (!tip || !chart) return;
  const show = (g: SVGGElement, x: number, y: number) => {
    tip.textContent = g.dataset["tip"] ?? "";
    tip.hidden = false;
    const box = chart.getBoundingClientRect();
    tip.style.left = `${Math.max(0, Math.min(x - box.left + 12, box.width - 260))}px`;
    tip.style.top = `${Math.max(0, y - box.top + 12)}px`;
  };
  for (const g of document.querySelectorAll<SVGGElement>("#energy .segbar")) {
    g.addEventListener("mouseenter", (e) => show(g, e.clientX, e.clientY));
    g.addEventListener("mousemove", (e) => show(g, e.clientX, e.clientY));
    g.addEventListener("mouseleave", () => (tip.hidden = true));
    g.addEventListener("focus", () => {
      const r = g.getBoundingClientRect();
      show(g, r.left + r.width / 2, r.top);
    });
    g.addEventListener("blur", () => (tip.hidden = true));
  }
}

async function renderRun(b: RunBundle, trust: readonly string[]): Promise<void> {
  const t0 = performance.now();
  const { result, engine } = await verifyWithWebCrypto(() => {
    const c = checkRun(b, trust);
    const g = c.record ? checkGrants(b, c.record.grantsId, c.energy?.total_uj ?? null) : null;
    return { c, g: g ?? { none: false, present: false, error: null, grants: [] } };
  });
  const { c, g } = result;
  engineNote(engine);
  $("banner").innerHTML = verdictHtml(c, trust);
  $("main").innerHTML = runHtml(c, g);
  energyHover();
  const search = $("search") as HTMLInputElement;
  search.addEventListener("input", () => {
    const q = search.value.toLowerCase();
    for (const row of document.querySelectorAll<HTMLElement>("#events tbody tr"))
      row.hidden = q !== "" && !row.textContent.toLowerCase().includes(q);
  });
  const word = c.valid ? (c.trusted ? "VALID" : "UNTRUSTED") : "INVALID";
  publish({ verdict: word, code: c.error?.code ?? "", ms: performance.now() - t0, engine });
}

function proveItem(c: FleetCheck): void {
  const i = Number(($("item") as HTMLSelectElement).value);
  if (c.fleet === null || c.opened === null || !Number.isInteger(i) || i >= c.fleet.size) return;
  ($("proof") as HTMLTextAreaElement).value = JSON.stringify(c.fleet.proveMember(i), null, 2);
  checkProof(c);
}

function checkProof(c: FleetCheck): void {
  if (c.opened === null) {
    $("proof-result").innerHTML = proofVerdictHtml(c.receipt, "");
    return;
  }
  const text = ($("proof") as HTMLTextAreaElement).value;
  const v = checkMembershipJson(c.opened, text);
  const r = c.opened;
  $("proof-result").innerHTML = proofVerdictHtml(
    v,
    `the item is in fleet ${r.fleet} of ${r.size} and its energy is counted in the signed ${r.total_uj} µJ`,
  );
}

async function renderFleet(b: FleetBundle, trust: readonly string[]): Promise<void> {
  const t0 = performance.now();
  const { result: c, engine } = await verifyWithWebCrypto(() => checkFleet(b, trust));
  engineNote(engine);
  $("banner").innerHTML = fleetVerdictHtml(c);
  $("main").innerHTML = fleetHtml(c);
  $("prove").addEventListener("click", () => proveItem(c));
  $("check-proof").addEventListener("click", () => checkProof(c));
  for (const g of document.querySelectorAll<SVGGElement>("#fleet-bars .hbar"))
    g.addEventListener("click", () => {
      ($("item") as HTMLSelectElement).value = g.dataset["key"] ?? "";
      proveItem(c);
    });
  const bad = !c.receipt.ok ? c.receipt : !c.items.ok ? c.items : null;
  const word = bad !== null ? "INVALID" : c.trusted ? "VALID" : "UNTRUSTED";
  publish({
    verdict: word,
    code: bad !== null ? bad.code : "",
    ms: performance.now() - t0,
    engine,
  });
}

function render(b: ReportBundle): Promise<void> {
  const trust = trustFromBox();
  document.body.dataset["verified"] = "";
  return b.kind === "run" ? renderRun(b, trust) : renderFleet(b, trust);
}

async function start(): Promise<void> {
  const b = readBundle();
  ($("trust") as HTMLTextAreaElement).value = b.trust.join("\n");
  // With no key embedded the verdict can only be UNTRUSTED: the box is open for the reader's keys.
  ($("trust-box") as HTMLDetailsElement).open = b.trust.length === 0;
  $("reverify").addEventListener("click", () => void render(b).catch(fail));
  await render(b);
}

function fail(e: unknown): void {
  const el = document.getElementById("banner");
  if (el) el.textContent = `the page could not verify: ${String(e)}`;
  publish({ verdict: "ERROR", code: String(e), ms: 0, engine: "" });
}

await start().catch(fail);
