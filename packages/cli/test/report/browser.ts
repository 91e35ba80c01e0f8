// Headless Chromium for the report tests (issue 19): Debian's /usr/bin/chromium (or SBX_CHROMIUM),
// driven by playwright-core through executablePath; no browser is ever downloaded. A missing
// browser fails the test that needs it, with how to install it: it is never skipped.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";

/** Where the tests keep their screenshots: test-artifacts/report/ at the repository root (ignored by git). */
export const ARTIFACTS = resolve(import.meta.dirname, "../../../../test-artifacts/report");

/** launch starts one headless Chromium for a test file; as root it needs --no-sandbox. */
export async function launch(): Promise<Browser> {
  const path = process.env["SBX_CHROMIUM"] ?? "/usr/bin/chromium";
  assert.ok(existsSync(path), `no Chromium at ${path}: apt-get install -y chromium (or set SBX_CHROMIUM)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: path, headless: true, args: ["--no-sandbox"] });
}

/** What a page published once it had verified. */
export interface PageOutcome {
  readonly verdict: string;
  readonly code: string;
  readonly ms: number;
  readonly engine: string;
  /** Every URL the page requested other than its own file (must stay empty: nothing is fetched). */
  readonly fetched: readonly string[];
  readonly errors: readonly string[];
}

/** openReport loads a report file and waits for the page's own verdict. */
export async function openReport(page: Page, file: string): Promise<PageOutcome> {
  const url = pathToFileURL(file).href;
  const fetched: string[] = [];
  const errors: string[] = [];
  page.removeAllListeners("request");
  page.removeAllListeners("pageerror");
  page.on("request", (r) => {
    if (r.url() !== url) fetched.push(r.url());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset["verified"] !== "", null, { timeout: 120_000 });
  const o = await page.evaluate(
    () =>
      (window as unknown as { sbxReport: { verdict: string; code: string; ms: number; engine: string } })
        .sbxReport,
  );
  return { ...o, fetched, errors };
}

const DATA_OPEN = '<script type="application/json" id="sbx-data">';

/** editData rewrites the data embedded in a report file (as a reader's tampering would). */
export function editData(file: string, out: string, edit: (data: Record<string, unknown>) => void): void {
  const html = readFileSync(file, "utf8");
  const i = html.indexOf(DATA_OPEN) + DATA_OPEN.length;
  const j = html.indexOf("</script>", i);
  const data = JSON.parse(html.slice(i, j)) as Record<string, unknown>;
  edit(data);
  const text = JSON.stringify(data).replace(/</g, "\\u003c");
  writeFileSync(out, html.slice(0, i) + text + html.slice(j));
}

/** shot keeps a full-page screenshot as a test artifact and returns its path. */
export async function shot(page: Page, name: string): Promise<string> {
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
