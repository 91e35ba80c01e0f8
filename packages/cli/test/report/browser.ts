// The browsers of the report tests (issue 19): Debian's Chromium (/usr/bin/chromium, or SBX_CHROMIUM)
// driven by playwright-core, and Debian's Firefox ESR (/usr/bin/firefox-esr, or SBX_FIREFOX) driven
// by puppeteer-core over WebDriver BiDi, which Firefox speaks natively; both through executablePath,
// so no browser is ever downloaded. A missing browser fails the test that needs it, with how to
// install it: it is never skipped. The tests talk to either through one small interface (Tab), so
// the same test bodies run in both.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";

/** Where the tests keep their screenshots: test-artifacts/report/ at the repository root (ignored by git). */
export const ARTIFACTS = resolve(import.meta.dirname, "../../../../test-artifacts/report");

export type BrowserName = "chromium" | "firefox";

/** One page in one browser, as the report tests use it. */
export interface Tab {
  readonly browser: BrowserName;
  goto(url: string): Promise<void>;
  /** evaluate runs fn(arg) in the page and returns its (JSON-serialisable) result. */
  evaluate<A, R>(fn: (arg: A) => R, arg: A): Promise<R>;
  /** waitFor waits until fn() is true in the page. */
  waitFor(fn: () => boolean, timeoutMs: number): Promise<void>;
  /** click clicks the first element matching the selector with the mouse, at its centre. */
  click(selector: string): Promise<void>;
  /** hover moves the mouse over the first element matching the selector, at its centre. */
  hover(selector: string): Promise<void>;
  /** fill sets an input's or textarea's value and fires its input and change events. */
  fill(selector: string, text: string): Promise<void>;
  select(selector: string, value: string): Promise<void>;
  value(selector: string): Promise<string>;
  screenshot(path: string): Promise<void>;
  /** Every URL requested other than the page's own file, since the last goto. */
  readonly requested: string[];
  /** Uncaught errors of the page, since the last goto. */
  readonly errors: string[];
}

export interface Session {
  readonly tab: Tab;
  close(): Promise<void>;
}

function binary(name: BrowserName): string {
  const path =
    name === "chromium"
      ? (process.env["SBX_CHROMIUM"] ?? "/usr/bin/chromium")
      : (process.env["SBX_FIREFOX"] ?? "/usr/bin/firefox-esr");
  const pkg = name === "chromium" ? "chromium" : "firefox-esr";
  const env = name === "chromium" ? "SBX_CHROMIUM" : "SBX_FIREFOX";
  assert.ok(existsSync(path), `no ${name} at ${path}: apt-get install -y ${pkg} (or set ${env})`);
  return path;
}

/** launch starts one headless browser with one 1280×900 page for a test file. */
export async function launch(name: BrowserName): Promise<Session> {
  const executablePath = binary(name);
  mkdirSync(ARTIFACTS, { recursive: true });
  return name === "chromium" ? launchChromium(executablePath) : launchFirefox(executablePath);
}

async function launchChromium(executablePath: string): Promise<Session> {
  // As root Chromium needs --no-sandbox.
  const browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const requested: string[] = [];
  const errors: string[] = [];
  let own = "";
  page.on("request", (r) => {
    if (r.url() !== own) requested.push(r.url());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  const tab: Tab = {
    browser: "chromium",
    requested,
    errors,
    async goto(url) {
      own = url;
      requested.length = 0;
      errors.length = 0;
      await page.goto(url);
    },
    evaluate: <A, R>(fn: (arg: A) => R, arg: A) =>
      page.evaluate(fn as (arg: unknown) => unknown, arg as unknown) as Promise<R>,
    async waitFor(fn, timeout) {
      await page.waitForFunction(fn, null, { timeout });
    },
    click: (s) => page.locator(s).first().click(),
    hover: (s) => page.locator(s).first().hover(),
    fill: (s, t) => page.locator(s).fill(t),
    async select(s, v) {
      await page.selectOption(s, v);
    },
    value: (s) => page.inputValue(s),
    async screenshot(path) {
      await page.screenshot({ path, fullPage: true });
    },
  };
  return { tab, close: () => browser.close() };
}

async function launchFirefox(executablePath: string): Promise<Session> {
  const browser = await puppeteer.launch({ browser: "firefox", executablePath, headless: true });
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const requested: string[] = [];
  const errors: string[] = [];
  let own = "";
  page.on("request", (r) => {
    if (r.url() !== own) requested.push(r.url());
  });
  page.on("pageerror", (e) => errors.push(e instanceof Error ? e.message : String(e)));
  const tab: Tab = {
    browser: "firefox",
    requested,
    errors,
    async goto(url) {
      own = url;
      requested.length = 0;
      errors.length = 0;
      await page.goto(url);
    },
    evaluate: <A, R>(fn: (arg: A) => R, arg: A) =>
      page.evaluate(fn as (arg: unknown) => unknown, arg) as Promise<R>,
    async waitFor(fn, timeout) {
      await page.waitForFunction(fn, { timeout, polling: 50 });
    },
    click: (s) => page.click(s),
    hover: (s) => page.hover(s),
    async fill(s, t) {
      // As playwright's fill does: focus, set the value, fire input and change (typing a long proof
      // key by key would only make the test slow).
      await page.focus(s);
      await page.$eval(
        s,
        (el, text) => {
          const input = el as HTMLInputElement;
          input.value = text;
          input.dispatchEvent(new Event("input", { bubbles: true }));
          input.dispatchEvent(new Event("change", { bubbles: true }));
        },
        t,
      );
    },
    async select(s, v) {
      const chosen = await page.select(s, v);
      assert.deepEqual(chosen, [v], `no option ${v} in ${s}`);
    },
    value: (s) => page.$eval(s, (el) => (el as HTMLInputElement).value),
    async screenshot(path) {
      await page.screenshot({ path: path, fullPage: true });
    },
  };
  return { tab, close: () => browser.close() };
}

/** count is the number of elements matching a selector. */
export function count(tab: Tab, selector: string): Promise<number> {
  return tab.evaluate((s) => document.querySelectorAll(s).length, selector);
}

/** texts are the rendered texts (innerText) of every element matching a selector. */
export function texts(tab: Tab, selector: string): Promise<string[]> {
  return tab.evaluate(
    (s) => Array.from(document.querySelectorAll<HTMLElement>(s), (e) => e.innerText),
    selector,
  );
}

/** textContents are the textContent of every element matching a selector (SVG text too). */
export function textContents(tab: Tab, selector: string): Promise<string[]> {
  return tab.evaluate((s) => Array.from(document.querySelectorAll(s), (e) => e.textContent), selector);
}

/** attr is an attribute of the one element matching a selector (fails when none or several match). */
export async function attr(tab: Tab, selector: string, name: string): Promise<string | null> {
  const r = await tab.evaluate(
    ([s, n]) => {
      const all = document.querySelectorAll(s);
      return { n: all.length, v: all.length === 1 ? all[0]!.getAttribute(n) : null };
    },
    [selector, name] as const,
  );
  assert.equal(r.n, 1, `${selector}: ${r.n} elements`);
  return r.v;
}

/** text is the rendered text of the one element matching a selector. */
export async function text(tab: Tab, selector: string): Promise<string> {
  const all = await texts(tab, selector);
  assert.equal(all.length, 1, `${selector}: ${all.length} elements`);
  return all[0]!;
}

/** colour is the computed colour of the first element matching a selector. */
export function colour(tab: Tab, selector: string): Promise<string | null> {
  return tab.evaluate((s) => {
    const el = document.querySelector(s);
    return el === null ? null : getComputedStyle(el).color;
  }, selector);
}

/**
 * reds lists the elements drawn in red (text, background, SVG fill or stroke with red ≥ 140 and
 * green and blue < 90: the page's colours of refusal, never its orange or its pinks), each as
 * `tag.class: property colour`.
 */
export function reds(tab: Tab): Promise<string[]> {
  // No named function inside: tsx would wrap it in a helper the page does not have.
  return tab.evaluate(() => {
    const out: string[] = [];
    const re = /^rgba?\((\d+), (\d+), (\d+)(, ([\d.]+))?\)$/;
    for (const el of document.querySelectorAll("body *")) {
      const st = getComputedStyle(el);
      if (st.display === "none" || (el instanceof HTMLElement && el.hidden)) continue;
      for (const prop of ["color", "background-color", "fill", "stroke"]) {
        const v = st.getPropertyValue(prop);
        const m = re.exec(v);
        if (m !== null && m[5] !== "0" && +m[1]! >= 140 && +m[2]! < 90 && +m[3]! < 90)
          out.push(`${el.tagName.toLowerCase()}.${el.getAttribute("class") ?? ""}: ${prop} ${v}`);
      }
    }
    return out;
  }, null);
}

/** What a page published once it had verified. */
export interface PageOutcome {
  readonly verdict: string;
  readonly code: string;
  readonly ms: number;
  readonly engine: string;
  /**
   * Every URL the page requested other than its own file, and every resource the page's own
   * Resource Timing saw loaded (must stay empty: nothing is fetched).
   */
  readonly fetched: readonly string[];
  readonly errors: readonly string[];
}

/** waitVerified waits until the page has published a verdict (after a load or a "verify again"). */
export async function waitVerified(tab: Tab): Promise<void> {
  await tab.waitFor(() => document.body.dataset["verified"] !== "", 120_000);
}

/** openReport loads a report file and waits for the page's own verdict. */
export async function openReport(tab: Tab, file: string): Promise<PageOutcome> {
  await tab.goto(pathToFileURL(file).href);
  await waitVerified(tab);
  const o = await tab.evaluate(() => {
    const r = (
      window as unknown as { sbxReport: { verdict: string; code: string; ms: number; engine: string } }
    ).sbxReport;
    const loaded = performance.getEntriesByType("resource").map((e) => e.name);
    return { verdict: r.verdict, code: r.code, ms: r.ms, engine: r.engine, loaded };
  }, null);
  const { loaded, ...rest } = o;
  // data: URLs reach nothing outside the file (Firefox loads a font of its own from one).
  const fetched = [...tab.requested, ...loaded].filter((u) => !u.startsWith("data:"));
  return { ...rest, fetched, errors: [...tab.errors] };
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

/** shot keeps a full-page screenshot as a test artifact (named after the browser) and returns its path. */
export async function shot(tab: Tab, name: string): Promise<string> {
  const path = join(ARTIFACTS, `${tab.browser}-${name}.png`);
  await tab.screenshot(path);
  return path;
}
