// Plain SVG charts drawn by the page from what it verified (issue 19): a timeline of segments on a
// time axis and sorted horizontal bars (the energy chart: energy.ts). Strings only: no DOM
// here, so the charts are the same in every browser and testable under Node.

/** esc makes text safe inside HTML and SVG text and attribute values. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A span on the timeline: an executed interval, a parked span, or an instant (close). */
export interface Span {
  readonly n: number;
  readonly kind: "executed" | "parked" | "closed" | "resumed" | "suspended";
  readonly start: number;
  readonly end: number;
  readonly label: string;
  readonly bad: boolean;
}

/** The colours of the page, one per meaning; red is kept for what failed verification. */
export const COLOURS = {
  executed: "#2b6cb0",
  parked: "#a0aec0",
  closed: "#1a202c",
  resumed: "#38a169",
  suspended: "#dd6b20",
  measured: "#2f855a",
  attributed: "#d69e2e",
  estimated: "#805ad5",
  bad: "#e53e3e",
} as const;

// A tick shows milliseconds when the whole axis spans less than a minute.
function fmtTime(ms: number, span: number): string {
  const iso = new Date(ms).toISOString();
  return span < 60_000 ? iso.slice(11, 23) : iso.replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function axis(x0: number, w: number, t0: number, t1: number, y: number): string {
  const ticks: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const x = x0 + (w * i) / 4;
    const t = t0 + ((t1 - t0) * i) / 4;
    const anchor = i === 0 ? "start" : i === 4 ? "end" : "middle";
    ticks.push(
      `<line x1="${x}" y1="${y}" x2="${x}" y2="${y + 4}" stroke="#4a5568"/>` +
        `<text x="${x}" y="${y + 16}" font-size="10" text-anchor="${anchor}">${esc(fmtTime(Math.round(t), t1 - t0))}</text>`,
    );
  }
  return `<line x1="${x0}" y1="${y}" x2="${x0 + w}" y2="${y}" stroke="#4a5568"/>${ticks.join("")}`;
}

/**
 * timelineSvg draws the segments on a time axis: executed intervals as blue bars, parked spans
 * (suspended → resumed, or → now when still parked) as grey bars, suspends, resumes and the close
 * as ticks. A span whose objects failed verification is outlined in red.
 */
export function timelineSvg(spans: readonly Span[], width = 960): string {
  if (spans.length === 0) return `<p class="muted">No segments with a time.</p>`;
  const t0 = Math.min(...spans.map((s) => s.start));
  const t1 = Math.max(t0 + 1, ...spans.map((s) => s.end));
  const x0 = 10;
  const w = width - 20;
  const x = (t: number) => x0 + ((t - t0) / (t1 - t0)) * w;
  const lane = { executed: 10, parked: 34, suspended: 58, resumed: 58, closed: 58 } as const;
  const parts = spans.map((s) => {
    const y = lane[s.kind];
    const stroke = s.bad ? ` stroke="${COLOURS.bad}" stroke-width="2"` : "";
    const title = `<title>${esc(s.label)}</title>`;
    if (s.kind === "executed" || s.kind === "parked") {
      const bw = Math.max(1, x(s.end) - x(s.start));
      return `<rect class="seg seg-${s.kind}" data-n="${s.n}" x="${x(s.start).toFixed(2)}" y="${y}" width="${bw.toFixed(2)}" height="18" fill="${COLOURS[s.kind]}"${stroke}>${title}</rect>`;
    }
    const cx = x(s.start).toFixed(2);
    return `<path class="seg seg-${s.kind}" data-n="${s.n}" d="M${cx} ${y} l5 9 l-5 9 l-5 -9 z" fill="${COLOURS[s.kind]}"${stroke}>${title}</path>`;
  });
  const legend = (["executed", "parked", "suspended", "resumed", "closed"] as const)
    .map(
      (k, i) =>
        `<rect x="${10 + i * 110}" y="110" width="10" height="10" fill="${COLOURS[k]}"/><text x="${24 + i * 110}" y="119" font-size="11">${k}</text>`,
    )
    .join("");
  return (
    `<svg class="chart" id="timeline" viewBox="0 0 ${width} 128" width="100%" role="img" aria-label="timeline of segments">` +
    `<text x="${x0}" y="8" font-size="9" fill="#4a5568">executed</text>` +
    parts.join("") +
    axis(x0, w, t0, t1, 84) +
    legend +
    `</svg>`
  );
}

/** One horizontal bar of a sorted chart. */
export interface HBar {
  readonly key: string;
  readonly label: string;
  readonly value: bigint;
}

/** sortedBarsSvg draws horizontal bars, largest first, each labelled and clickable by `data-key`. */
export function sortedBarsSvg(bars: readonly HBar[], width = 960): string {
  if (bars.length === 0) return `<p class="muted">No items.</p>`;
  const sorted = [...bars].sort((a, b) => (a.value < b.value ? 1 : a.value > b.value ? -1 : 0));
  const max = sorted[0]!.value > 0n ? sorted[0]!.value : 1n;
  const row = 18;
  const labelW = 260;
  const parts = sorted.map((b, i) => {
    const w = Math.max(1, (Number((b.value * 1_000_000n) / max) / 1_000_000) * (width - labelW - 120));
    const y = i * row;
    return (
      `<g class="hbar" data-key="${esc(b.key)}"><text x="${labelW - 6}" y="${y + 13}" font-size="11" text-anchor="end">${esc(b.label)}</text>` +
      `<rect x="${labelW}" y="${y + 2}" width="${w.toFixed(2)}" height="${row - 4}" fill="${COLOURS.executed}"/>` +
      `<text x="${labelW + w + 6}" y="${y + 13}" font-size="11">${esc(String(b.value))} µJ</text></g>`
    );
  });
  return `<svg class="chart" id="fleet-bars" viewBox="0 0 ${width} ${sorted.length * row}" width="100%" role="img" aria-label="items by energy">${parts.join("")}</svg>`;
}
