// The report page's styles, inlined by html.ts.
export const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 0 16px 48px; color: #1a202c; }
h1 small { font-weight: normal; color: #4a5568; font-size: 60%; }
h2 { margin-top: 28px; border-bottom: 1px solid #e2e8f0; }
code { font: 12px ui-monospace, monospace; word-break: break-all; }
.muted { color: #718096; }
.verdict { padding: 10px 14px; border-radius: 6px; font-weight: bold; font-size: 18px; margin: 8px 0; }
.verdict span { font-weight: normal; font-size: 14px; }
.verdict.valid { background: #c6f6d5; color: #22543d; }
.verdict.untrusted { background: #fefcbf; color: #744210; }
.verdict.invalid { background: #fed7d7; color: #9b2c2c; }
.verdict.pending { background: #edf2f7; }
table { border-collapse: collapse; width: 100%; font-size: 12px; }
th, td { border-bottom: 1px solid #edf2f7; padding: 3px 6px; text-align: left; vertical-align: top; }
tr.bad td, tr.state-invalid td { background: #fff5f5; color: #9b2c2c; }
tr.state-invalid td:first-child { font-weight: bold; }
tr.state-missing td, tr.state-omitted td { color: #718096; }
tr.ev-exec-decision td:nth-child(3) { font-weight: bold; }
tr.grant.state-invalid td, .bad-text { color: #9b2c2c; }
.code { color: #c53030; font-weight: bold; }
svg.chart { background: #fafafa; border: 1px solid #edf2f7; margin: 6px 0; }
.hbar { cursor: pointer; }
.energy-view { display: flex; gap: 16px; align-items: flex-start; flex-wrap: wrap; }
.energy-chart { position: relative; flex: 3 1 600px; min-width: 0; }
.energy-figures { flex: 2 1 360px; }
.segbar { cursor: default; outline: none; }
.segbar:hover rect.bar, .segbar:focus rect.bar { opacity: 0.8; }
.tip { position: absolute; z-index: 2; max-width: 260px; background: #1a202c; color: #fff; padding: 4px 8px; border-radius: 4px; font-size: 12px; pointer-events: none; }
#energy-table td, #energy-table th { white-space: nowrap; }
.unverified { background: #edf2f7; color: #4a5568; border-radius: 3px; padding: 0 4px; font-size: 11px; }
#search { width: 100%; padding: 6px; margin: 6px 0; }
textarea { width: 100%; font: 12px ui-monospace, monospace; }
`;
