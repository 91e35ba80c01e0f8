// The energy chart of a run's page (issue 38): one stacked bar per segment by provenance (§6.2),
// on a labelled axis in joules with readable units; idle energy while parked (§13.6) in a panel of
// its own scale beside the active energy, so it shows however small it is; every bar carries its
// values for the page's hover note (main.ts), and the same values stand in a table beside the chart.
import { COLOURS, esc } from "./svg.ts";

/** One stacked bar: a segment's energy by provenance; `idle` marks energy used while parked. */
export interface EnergyBar {
  readonly n: number;
  readonly label: string;
  readonly idle: boolean;
  readonly measured: bigint;
  readonly attributed: bigint;
  readonly estimated: bigint;
  readonly bad: boolean;
}

export const PROVS = ["measured", "attributed", "estimated"] as const;

/** What each provenance means (§6.2), as the legend explains it. */
const MEANING = {
  measured: "measured: a counter that belongs to the unit (e.g. RAPL on a dedicated machine)",
  attributed: "attributed: a shared counter split by a stated ratio (e.g. CPU-time share)",
  estimated: "estimated: a model with stated coefficients (e.g. CPU seconds × watts)",
} as const;

const PREFIXES = [
  [1e12, "MJ"],
  [1e9, "kJ"],
  [1e6, "J"],
  [1e3, "mJ"],
  [1, "µJ"],
] as const;

/** joules writes microjoules in the largest unit that keeps the figure at least 1 (3 significant digits). */
export function joules(uj: bigint | number): string {
  const v = Number(uj);
  if (v === 0) return "0 J";
  const [scale, unit] = PREFIXES.find(([s]) => Math.abs(v) >= s) ?? ([1, "µJ"] as const);
  return `${Number((v / scale).toPrecision(3))} ${unit}`;
}

/** niceStep is the tick step (1, 2, 2.5 or 5 × a power of ten) that covers `max` in four ticks. */
export function niceStep(max: number): number {
  const raw = Math.max(max, 1) / 4;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
}

function total(b: EnergyBar): bigint {
  return b.measured + b.attributed + b.estimated;
}

/** tipOf is a bar's hover note: segment, total in readable units and µJ, each provenance's share. */
export function tipOf(b: EnergyBar): string {
  const parts = PROVS.filter((p) => b[p] > 0n).map((p) => `${p} ${b[p]} µJ`);
  return `${b.label}: ${joules(total(b))} (${total(b)} µJ)${parts.length ? `; ${parts.join(", ")}` : ""}${b.bad ? "; not verified" : ""}`;
}

interface Panel {
  readonly x0: number;
  readonly w: number;
  readonly title: string;
}

const H = 200;
const TOP = 24;

// The y axis of one panel: a tick and grid line at every step in joules, its title above.
function yAxis(p: Panel, step: number, top: number): string {
  const y = (v: number) => H - (v / top) * (H - TOP);
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => {
    const v = step * i;
    return (
      `<line x1="${p.x0}" y1="${y(v).toFixed(1)}" x2="${p.x0 + p.w}" y2="${y(v).toFixed(1)}" stroke="#e2e8f0"/>` +
      `<text class="axis-label" x="${p.x0 - 6}" y="${(y(v) + 4).toFixed(1)}" font-size="11" text-anchor="end">${esc(joules(v))}</text>`
    );
  });
  return (
    ticks.join("") +
    `<line x1="${p.x0}" y1="${TOP}" x2="${p.x0}" y2="${H}" stroke="#4a5568"/>` +
    `<line x1="${p.x0}" y1="${H}" x2="${p.x0 + p.w}" y2="${H}" stroke="#4a5568"/>` +
    `<text class="axis-title" x="${p.x0 - 60}" y="12" font-size="12" font-weight="bold">${esc(p.title)}</text>`
  );
}

// One panel: its axis, scaled to its own largest bar, and its bars.
function panel(p: Panel, bars: readonly EnergyBar[]): string {
  const max = Math.max(1, ...bars.map((b) => Number(total(b))));
  const step = niceStep(max);
  const top = Math.ceil(max / step) * step;
  const slot = p.w / Math.max(bars.length, 1);
  const bw = Math.min(60, Math.max(2, slot * 0.7));
  const out = bars.map((b, i) => {
    const x = p.x0 + i * slot + (slot - bw) / 2;
    let y = H;
    const rects = PROVS.map((k) => {
      if (b[k] === 0n) return "";
      const bh = Math.max(1, (Number(b[k]) / top) * (H - TOP));
      y -= bh;
      const fill = b.idle ? `url(#hatch-${k})` : COLOURS[k];
      return `<rect class="bar bar-${k}${b.idle ? " idle" : ""}" x="${x.toFixed(2)}" y="${y.toFixed(2)}" width="${bw.toFixed(2)}" height="${bh.toFixed(2)}" fill="${fill}"${b.bad ? ` stroke="${COLOURS.bad}" stroke-dasharray="3 2"` : ""}/>`;
    }).join("");
    // A transparent cover over the whole slot, so the hover note answers anywhere above the bar.
    const cover = `<rect class="hit" x="${(p.x0 + i * slot).toFixed(2)}" y="${TOP}" width="${slot.toFixed(2)}" height="${H - TOP}" fill="transparent"/>`;
    return (
      `<g class="segbar${b.idle ? " idle" : ""}" data-n="${b.n}" data-tip="${esc(tipOf(b))}" tabindex="0">${cover}${rects}` +
      `<text class="bar-label" x="${(x + bw / 2).toFixed(2)}" y="${H + 14}" font-size="11" text-anchor="middle">#${b.n}</text>` +
      `<title>${esc(tipOf(b))}</title></g>`
    );
  });
  return yAxis(p, step, top) + out.join("");
}

function legend(y: number, anyBad: boolean): string {
  const items = PROVS.map(
    (k, i) =>
      `<rect x="10" y="${y + i * 16}" width="10" height="10" fill="${COLOURS[k]}"/><text class="legend" x="26" y="${y + 9 + i * 16}" font-size="11">${esc(MEANING[k])}</text>`,
  ).join("");
  const idle = `<rect x="10" y="${y + 48}" width="10" height="10" fill="url(#hatch-estimated)" stroke="#718096"/><text class="legend" x="26" y="${y + 57}" font-size="11">hatched: idle energy while parked, on a scale of its own</text>`;
  const dashed = `<rect x="10" y="${y + 64}" width="10" height="10" fill="#fff" stroke="${COLOURS.bad}" stroke-dasharray="3 2"/><text class="legend" x="26" y="${y + 73}" font-size="11">outlined red: an object of the segment failed verification</text>`;
  return items + idle + (anyBad ? dashed : "");
}

/**
 * energySvg draws the active energy of executed segments and, on a scale of its own, the idle
 * energy of each resume, each bar stacked measured / attributed / estimated (idle bars hatched).
 */
export function energySvg(bars: readonly EnergyBar[], width = 720): string {
  if (bars.length === 0) return `<p class="muted">No energy figures verified.</p>`;
  const active = bars.filter((b) => !b.idle);
  const idle = bars.filter((b) => b.idle);
  const left = 78;
  const both = active.length > 0 && idle.length > 0;
  const split = both ? Math.round((width - left) * 0.62) : width - left - 10;
  const panels = [
    ...(active.length > 0
      ? [panel({ x0: left, w: split - 10, title: "active energy per executed segment (joules)" }, active)]
      : []),
    ...(idle.length > 0
      ? [
          panel(
            {
              x0: both ? left + split + 70 : left,
              w: both ? width - left - split - 80 : split,
              title: "idle energy while parked (joules)",
            },
            idle,
          ),
        ]
      : []),
  ];
  const hatch = PROVS.map(
    (p) =>
      `<pattern id="hatch-${p}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff"/><rect width="3" height="6" fill="${COLOURS[p]}"/></pattern>`,
  ).join("");
  return (
    `<svg class="chart" id="energy" viewBox="0 0 ${width} ${H + (bars.some((b) => b.bad) ? 106 : 90)}" width="100%" role="img" aria-label="energy per segment by provenance, in joules">` +
    `<defs>${hatch}</defs>${panels.join("")}${legend(
      H + 26,
      bars.some((b) => b.bad),
    )}</svg>`
  );
}

/** energyTableHtml lists the chart's figures: per segment, each provenance and the total, readable and exact. */
export function energyTableHtml(bars: readonly EnergyBar[]): string {
  const cell = (v: bigint) => `<td title="${v} µJ">${v === 0n ? "–" : esc(joules(v))}</td>`;
  const rows = bars.map(
    (b) =>
      `<tr class="energy-row${b.idle ? " idle" : ""}${b.bad ? " bad" : ""}" data-n="${b.n}"><td>#${b.n}</td><td>${b.idle ? "idle while parked" : "executed"}</td>${PROVS.map((p) => cell(b[p])).join("")}<td class="total"><b>${esc(joules(total(b)))}</b> <span class="muted">${total(b)} µJ</span></td></tr>`,
  );
  return `<table id="energy-table"><thead><tr><th>#</th><th>kind</th><th>measured</th><th>attributed</th><th>estimated</th><th>total</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}
