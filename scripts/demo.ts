// `npm run demo`: runs every part in scripts/demo/ in file-name order. Each part is a module with a
// default export `(ctx) => Promise<void>` that prints what it shows; parts share a scratch folder.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { DemoContext } from "./demo/context.ts";

const dir = join(dirname(fileURLToPath(import.meta.url)), "demo");
const only = process.argv.slice(2);
const parts = readdirSync(dir)
  .filter((f) => /^\d\d-.*\.ts$/.test(f))
  .sort();
// A part asked for that no file is: a usage error (exit 2), naming the parts there are.
const unknown = only.filter((o) => !parts.some((f) => f.includes(o)));
if (unknown.length > 0) {
  console.error(
    `demo: no part ${unknown.join(", ")}; the parts are ${parts.map((f) => f.slice(0, 2)).join(", ")}`,
  );
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), "sbx-demo-"));
const ctx: DemoContext = {
  work,
  title: (t) => console.log(`\n\x1b[1m== ${t}\x1b[0m`),
  say: (l) => console.log(`   ${l}`),
};
let failed = false;
try {
  for (const f of parts) {
    if (only.length && !only.some((o) => f.includes(o))) continue;
    const part = (await import(pathToFileURL(join(dir, f)).href)) as {
      default: (c: DemoContext) => Promise<void>;
    };
    await part.default(ctx);
  }
} catch (e) {
  failed = true;
  console.error(`\ndemo failed: ${(e as Error).stack ?? String(e)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(failed ? "\ndemo: FAILED" : "\ndemo: done");
process.exit(failed ? 1 : 0);
