// The report file (issue 19): one self-contained HTML page — the styles, the page's script
// (dist/report/page.js, built by scripts/build.mjs) and the embedded data inlined, nothing fetched.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CliError } from "../errors.ts";
import type { ReportBundle } from "./bundle.ts";
import { STYLE } from "./style.ts";

const PAGE_JS = fileURLToPath(new URL("../../dist/report/page.js", import.meta.url));

/** pageScript returns the built page script; refuses (exit 2) when the build has not made it. */
export function pageScript(): string {
  if (!existsSync(PAGE_JS))
    throw new CliError("Unreadable", `the report page script ${PAGE_JS} is not built: run npm run build`);
  return readFileSync(PAGE_JS, "utf8");
}

/** inlineSafe keeps text from closing the element it is inlined in. */
function inlineSafe(s: string): string {
  return s.replace(/<\/(script|style)/gi, "<\\/$1").replace(/<!--/g, "<\\!--");
}

/** escText escapes text for an HTML text node. */
function escText(s: string): string {
  return s.replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** reportHtml assembles the page: banner, trust box, the view the script draws, the data, the script. */
export function reportHtml(b: ReportBundle, script: string = pageScript()): string {
  // JSON inside a <script type="application/json">: "<" escaped, so no tag can close it.
  const data = JSON.stringify(b).replace(/</g, "\\u003c");
  const what = b.kind === "run" ? "run record" : "fleet receipt";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>sbx report: ${escText(b.name)}</title>
<style>${inlineSafe(STYLE)}</style></head>
<body data-verified="">
<header><h1>${escText(what)} <small>${escText(b.name)}</small></h1>
<p class="muted">Everything below is decoded and verified by this page, in your browser, from the bytes embedded in it: BLAKE3, canonical JSON and DSSE Ed25519 signatures by the project's own code. Nothing is taken from the tool that wrote it.</p>
<div id="banner"><div class="verdict pending">verifying… (this page needs JavaScript)</div></div>
<details id="trust-box"><summary>trusted keys</summary>
<p>One did:key per line. The writer's are filled in; replace them with the keys you trust and verify again.</p>
<textarea id="trust" rows="4" cols="100" spellcheck="false"></textarea><br>
<button id="reverify">verify again with these keys</button> <span id="trust-note" class="muted"></span></details>
</header>
<main id="main"></main>
<footer><p class="muted" id="engine"></p></footer>
<script type="application/json" id="sbx-data">${data}</script>
<script type="module">${inlineSafe(script)}</script>
</body></html>
`;
}
