// The fleet view of a report page (issue 19, §16): the receipt's verdict, the root, the items by
// energy (sorted bars), and a membership proof made from the embedded items for the item a reader
// picks, checked in the page against the signed root and total; a reader may edit or paste a proof.
import type { FleetItem } from "@sbx/sandbox-attest/fleet";
import type { FleetCheck, Verdict } from "../fleetcheck.ts";
import { esc, sortedBarsSvg } from "./svg.ts";

/** verdictBanner shows one verdict as the page's banner. */
export function fleetVerdictHtml(c: FleetCheck): string {
  const bad = !c.receipt.ok ? c.receipt : !c.items.ok ? c.items : null;
  if (bad !== null)
    return `<div class="verdict invalid" id="verdict" data-verdict="INVALID" data-code="${esc(bad.code)}">INVALID <code>${esc(bad.code)}</code> ${esc(bad.message)}</div>`;
  const word = c.trusted ? "VALID" : "UNTRUSTED";
  return `<div class="verdict ${word.toLowerCase()}" id="verdict" data-verdict="${word}" data-code="">${word} <span>receipt signature checked${c.trusted ? " by a trusted host" : ", but no trusted key was given"}; the items rebuild its root and total</span></div>`;
}

/** proofVerdictHtml shows a membership proof's verdict. */
export function proofVerdictHtml(v: Verdict, what: string): string {
  if (v.ok)
    return `<div class="verdict valid" id="proof-verdict" data-verdict="VALID" data-code="">proof VALID <span>${esc(what)}</span></div>`;
  return `<div class="verdict invalid" id="proof-verdict" data-verdict="INVALID" data-code="${esc(v.code)}">proof INVALID <code>${esc(v.code)}</code> ${esc(v.message)}</div>`;
}

function itemOption(it: FleetItem, i: number): string {
  return `<option value="${i}">${esc(it.item)} (${esc(it.energy_uj)} µJ, ${esc(it.outcome)})</option>`;
}

/** fleetHtml renders the fleet view below the banner. */
export function fleetHtml(c: FleetCheck): string {
  const r = c.opened;
  const head = r
    ? `<p>fleet <b>${esc(r.fleet)}</b> · ${r.size} runs · root <code id="root">${esc(r.root)}</code> · total <b>${esc(r.total_uj)} µJ</b> · signed by <code>${esc(r.host)}</code> · span ${new Date(r.start_ms).toISOString()} – ${new Date(r.end_ms).toISOString()}</p>`
    : `<p class="muted">The receipt could not be opened; the items are shown as embedded, unverified.</p>`;
  const bars = sortedBarsSvg(
    c.list.map((it, i) => ({ key: String(i), label: it.item, value: BigInt(it.energy_uj) })),
  );
  const pick = `<p><label>item <select id="item">${c.list.map(itemOption).join("")}</select></label> <button id="prove">make and check its proof</button></p>`;
  const paste = `<p><label>membership proof (edit or paste one, e.g. from <code>sbx fleet prove</code>)<br><textarea id="proof" rows="10" cols="100" spellcheck="false"></textarea></label><br><button id="check-proof">check this proof</button></p><div id="proof-result"></div>`;
  return `${head}<h2>Items by energy</h2>${bars}<h2>Membership proof</h2>${pick}${paste}`;
}
