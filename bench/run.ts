// `npm run bench [-- NAME…]`: runs every bench/*.bench.ts (or those whose name contains NAME).
// Each prints its own figures as medians with a ratio against an anchor measured in the same run.
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const dir = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
for (const f of readdirSync(dir).sort()) {
  if (!f.endsWith(".bench.ts") || (only.length && !only.some((o) => f.includes(o)))) continue;
  console.log(`\n## ${f}`);
  const mod = (await import(pathToFileURL(join(dir, f)).href)) as { default: () => Promise<void> };
  await mod.default();
}
