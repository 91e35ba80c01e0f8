// The run view of a report page (issue 19): everything drawn from RunCheck, i.e. from what the
// page itself decoded and verified; objects that failed are drawn in red with their code.
import type { JournalEvent } from "@sbx/sandbox-attest/journal";
import type { Segment } from "@sbx/sandbox-attest/runrecord";
import { NO_GRANTS, type GrantsCheck } from "../grants.ts";
import type { ObjectCheck, RunCheck } from "../verify.ts";
import { esc, timelineSvg, type Span } from "./svg.ts";
import { energySvg, energyTableHtml, type EnergyBar } from "./energy.ts";

/** verdictHtml is the banner: VALID, UNTRUSTED (no trusted key given) or INVALID with the code. */
export function verdictHtml(c: RunCheck, trust: readonly string[]): string {
  if (!c.valid && c.error !== null)
    return `<div class="verdict invalid" id="verdict" data-verdict="INVALID" data-code="${esc(c.error.code)}">INVALID <code>${esc(c.error.code)}</code> ${esc(c.error.message)}</div>`;
  const word = c.trusted ? "VALID" : "UNTRUSTED";
  const why = c.trusted
    ? `every signature checked, every signer among the ${trust.length} trusted key(s)`
    : "every signature checked, but no trusted key was given: paste one below";
  return `<div class="verdict ${word.toLowerCase()}" id="verdict" data-verdict="${word}" data-code="">${word} <span>${esc(why)}</span></div>`;
}

function badSegments(c: RunCheck): Set<number> {
  return new Set(c.objects.filter((o) => o.state === "invalid").map((o) => o.segment));
}

/**
 * spansOf places each segment on the time axis: an executed interval at the times its attestation
 * states, drawn as failed (red) and labelled unverified when the attestation did not verify.
 */
export function spansOf(c: RunCheck): Span[] {
  const segs = c.record?.segments ?? [];
  const bad = badSegments(c);
  const out: Span[] = [];
  let parkedAt: number | null = null;
  segs.forEach((s, i) => {
    const n = i + 1;
    const b = bad.has(n);
    if (s.kind === "executed") {
      const v = c.intervals.get(n);
      const i = v?.stated;
      if (i)
        out.push({
          n,
          kind: "executed",
          start: i.start_ms,
          end: i.end_ms,
          label: `#${n} executed ${i.end_ms - i.start_ms} ms${v.predicate ? "" : " (unverified)"}`,
          bad: b || v.predicate === null,
        });
      return;
    }
    // A hand-off ends the record here as a close does (§13.2a): drawn on the close lane.
    const lane = s.kind === "moved" ? "closed" : s.kind;
    out.push({ n, kind: lane, start: s.at_ms, end: s.at_ms, label: `#${n} ${s.kind}`, bad: b });
    if (s.kind === "suspended") parkedAt = s.at_ms;
    if (s.kind === "resumed" && parkedAt !== null) {
      out.push({
        n,
        kind: "parked",
        start: parkedAt,
        end: s.at_ms,
        label: `parked ${s.at_ms - parkedAt} ms before #${n}`,
        bad: b,
      });
      parkedAt = null;
    }
  });
  return out;
}

/** barsOf sums each segment's energy by provenance: receipt components, or idle energy on resume. */
export function barsOf(c: RunCheck): EnergyBar[] {
  const segs = c.record?.segments ?? [];
  const bad = badSegments(c);
  const out: EnergyBar[] = [];
  segs.forEach((s, i) => {
    const n = i + 1;
    const sum = { measured: 0n, attributed: 0n, estimated: 0n };
    if (s.kind === "executed") {
      const v = c.intervals.get(n);
      if (v?.components) for (const k of v.components) sum[k.provenance] += BigInt(k.uj);
      else if (v?.predicate) sum[v.predicate.energy.provenance] += BigInt(v.predicate.energy.total_uj);
      else return;
      out.push({ n, label: `#${n} executed`, idle: false, ...sum, bad: bad.has(n) });
    } else if (s.kind === "resumed") {
      sum[s.idle_provenance] += BigInt(s.idle_uj);
      out.push({
        n,
        label: `#${n} idle while parked (${s.idle_source})`,
        idle: true,
        ...sum,
        bad: bad.has(n),
      });
    }
  });
  return out;
}

function segDetail(c: RunCheck, s: Segment, n: number): string {
  if (s.kind === "executed") {
    const v = c.intervals.get(n);
    const p = v?.predicate;
    if (!p) {
      const i = v?.stated;
      const ms = i ? `${i.end_ms - i.start_ms} ms as stated, ` : "";
      return `${ms}attestation <code>${esc(s.attestation)}</code> (not verified: see Objects)`;
    }
    const o = p.outcome.status === "exited" ? `exit ${p.outcome.exit_code}` : p.outcome.status;
    return `${p.interval.end_ms - p.interval.start_ms} ms, ${o}, ${esc(p.energy.total_uj)} µJ ${esc(p.energy.provenance)}, level ${esc(p.level)}, attestation <code>${esc(s.attestation)}</code>`;
  }
  if (s.kind === "closed") return `outcome ${esc(s.outcome)}`;
  if (s.kind === "moved")
    return `moved to ${esc(s.to)} at head <code>${esc(s.head)}</code>, signed by ${esc(s.signer)}`;
  const snap = `snapshot <code>${esc(s.snapshot.fs_root)}</code>`;
  if (s.kind === "suspended") return snap;
  return `${snap}, idle ${esc(s.idle_uj)} µJ ${esc(s.idle_provenance)} (${esc(s.idle_source)})`;
}

// A segment's time: its own `at_ms`, or its interval's start as the attestation states it; marked
// unverified when a check of the segment failed, and said to be unknown when nothing states it.
function time(c: RunCheck, s: Segment, n: number, bad: boolean): string {
  const v = c.intervals.get(n);
  const t = s.kind === "executed" ? v?.stated?.start_ms : s.at_ms;
  const unverified = bad || (s.kind === "executed" && !v?.predicate);
  const mark = unverified ? ` <span class="unverified">unverified</span>` : "";
  if (t === undefined)
    return `<span class="muted">not known: the attestation is not readable here</span>${mark}`;
  return `${new Date(t).toISOString()}${mark}`;
}

/** segmentsHtml lists every segment with its head, time and what it cites. */
export function segmentsHtml(c: RunCheck): string {
  const segs = c.record?.segments ?? [];
  const bad = badSegments(c);
  const rows = segs.map((s, i) => {
    const n = i + 1;
    return `<tr class="segment kind-${s.kind}${bad.has(n) ? " bad" : ""}" data-n="${n}"><td>${n}</td><td>${s.kind}</td><td class="time">${time(c, s, n, bad.has(n))}</td><td>${segDetail(c, s, n)}</td><td><code>${esc(c.record?.heads[n] ?? "")}</code></td></tr>`;
  });
  return `<table id="segments"><thead><tr><th>#</th><th>kind</th><th>time</th><th>detail</th><th>head</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function eventText(e: JournalEvent): string {
  switch (e.type) {
    case "process.start":
      return `pid ${e.pid} ${e.argv.join(" ")} binary ${e.binary}`;
    case "exec.decision":
      return `${e.allowed ? "allowed" : "DENIED"} ${e.path} ${e.digest ?? "no digest"} (rule ${e.rule}, ${e.route}, pid ${e.pid}, policy ${e.policy})`;
    case "stdio.chunk":
      return `${e.stream} chunk ${e.chunk} ${e.length} bytes ${e.digest}`;
    case "file.write":
      return `${e.path} ${e.size} bytes ${e.digest}`;
    case "process.exit":
      return `pid ${e.pid} code ${e.code ?? "-"} signal ${e.signal ?? "-"}`;
  }
}

/** eventsHtml lists each interval's journal events (exec decisions first-class), searchable. */
export function eventsHtml(c: RunCheck): string {
  const rows: string[] = [];
  let without = 0;
  for (const [n, v] of c.intervals) {
    if (v.events === null) {
      without++;
      continue;
    }
    for (const e of v.events)
      rows.push(
        `<tr class="event ev-${e.type.replace(".", "-")}" data-n="${n}"><td>${n}</td><td>${e.seq}</td><td>${e.type}</td><td>${esc(eventText(e))}</td></tr>`,
      );
  }
  const note =
    without > 0
      ? `<p class="muted">${without} interval(s) without a journal in this report: their roots are bound by the attestations, but the events were not embedded.</p>`
      : "";
  return `${note}<table id="events"><thead><tr><th>segment</th><th>seq</th><th>type</th><th>event</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function objectRow(o: ObjectCheck): string {
  const code = o.code !== null ? `<code class="code">${esc(o.code)}</code> ` : "";
  return `<tr class="object state-${o.state}" data-address="${esc(o.address)}" data-code="${esc(o.code ?? "")}"><td>${o.state}</td><td>${o.kind}</td><td>${o.segment || ""}</td><td>${esc(o.path)}</td><td><code>${esc(o.address)}</code></td><td>${o.bytes ?? ""}</td><td>${code}${esc(o.message ?? "")}</td></tr>`;
}

/** objectsHtml lists every object with its address and its own verdict; invalid rows come first. */
export function objectsHtml(c: RunCheck): string {
  const order = { invalid: 0, missing: 1, omitted: 2, valid: 3 };
  const rows = [...c.objects].sort((a, b) => order[a.state] - order[b.state]).map(objectRow);
  const count = (s: ObjectCheck["state"]) => c.objects.filter((o) => o.state === s).length;
  return `<p>${count("valid")} valid, ${count("invalid")} invalid, ${count("missing")} missing, ${count("omitted")} not embedded</p><table id="objects"><thead><tr><th>verdict</th><th>kind</th><th>segment</th><th>path</th><th>address</th><th>bytes</th><th>code</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function energyText(c: RunCheck): string {
  const e = c.energy;
  if (e === null) return `<p class="muted">Energy is shown only for a run that verifies.</p>`;
  const i = e.idle_by_provenance;
  return `<p id="energy-total">active ${e.active_uj} µJ + idle ${e.idle_uj} µJ = total <b>${e.total_uj} µJ</b>${e.complete ? "" : ` (lower bound: ${e.unresolved.length} attestation(s) not embedded)`}; idle by provenance: measured ${i.measured}, attributed ${i.attributed}, estimated ${i.estimated}</p>`;
}

/** grantsHtml shows the grant chain of each member of the run's grant set, with budget, spent, remaining. */
export function grantsHtml(g: GrantsCheck): string {
  if (g.none) return `<p id="grants-verdict" data-state="none">${NO_GRANTS}</p>`;
  if (!g.present)
    return `<p class="muted">No grant set embedded: the store holds none at this run's grants_id.</p>`;
  if (g.error !== null)
    return `<p class="bad-text" id="grants-verdict" data-code="${esc(g.error.code)}">grant set INVALID <code class="code">${esc(g.error.code)}</code> ${esc(g.error.message)}</p>`;
  const rows = g.grants.map((v) => {
    const state = v.error === null ? "valid" : "invalid";
    const code =
      v.error !== null ? `<code class="code">${esc(v.error.code)}</code> ${esc(v.error.message)}` : "";
    const links = v.chain
      .map(
        (l, i) =>
          `${"&nbsp;&nbsp;".repeat(i)}${i === 0 ? "root" : "↳"} <code>${esc(l.address)}</code> ${esc(l.issuer)} → ${esc(l.holder)}, ${l.budget.uj} µJ, depth ${l.depth}`,
      )
      .join("<br>");
    return `<tr class="grant state-${state}" data-address="${esc(v.address)}" data-code="${esc(v.error?.code ?? "")}"><td>${state}</td><td>${links || `<code>${esc(v.address)}</code>`}</td><td>${v.budget_uj ?? ""}</td><td>${v.spent_uj ?? ""}</td><td class="remaining">${v.remaining_uj ?? ""}</td><td>${code}</td></tr>`;
  });
  return `<table id="grants"><thead><tr><th>verdict</th><th>chain (root first)</th><th>budget µJ</th><th>spent µJ (this run)</th><th>remaining µJ</th><th>code</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** energyView is the chart with its hover note, and beside it the table of the same figures. */
function energyView(bars: readonly EnergyBar[]): string {
  if (bars.length === 0) return energySvg(bars);
  const tip = `<div id="energy-tip" class="tip" role="status" aria-live="polite" hidden></div>`;
  return `<div class="energy-view"><div class="energy-chart">${energySvg(bars)}${tip}<p class="muted">Hover or focus a bar for its values.</p></div><div class="energy-figures">${energyTableHtml(bars)}</div></div>`;
}

/** runHtml renders the whole run view below the banner. */
export function runHtml(c: RunCheck, g: GrantsCheck): string {
  const r = c.record;
  const head = r
    ? `<p>unit <code>${esc(r.unitId)}</code> · grants <code>${esc(r.grantsId)}</code> · head <code id="head">${esc(r.head)}</code> · phase ${esc(r.phase)} · ${r.segments.length} segments</p>`
    : "";
  const signers = `<p>signers: ${c.signers.map((s) => `<code>${esc(s)}</code>`).join(", ") || "none"}</p>`;
  return (
    head +
    signers +
    `<h2>Timeline</h2>${timelineSvg(spansOf(c))}` +
    `<h2>Energy per segment</h2>${energyView(barsOf(c))}${energyText(c)}` +
    `<h2>Grant chain</h2>${grantsHtml(g)}` +
    `<h2>Segments</h2>${segmentsHtml(c)}` +
    `<h2>Exec decisions and journal events</h2><input id="search" type="search" placeholder="search paths, digests, types…">${eventsHtml(c)}` +
    `<h2>Objects</h2>${objectsHtml(c)}`
  );
}
