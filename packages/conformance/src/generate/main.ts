// `npm run vectors` (--write) regenerates vectors/*.json from the class modules and the fixed test
// keys; `npm run vectors:check` (--check) regenerates in memory and fails on any byte of difference.
import { readFileSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { loadClasses } from "../registry.ts";
import { vectorsDir } from "../paths.ts";
import { renderVectorFiles } from "./render.ts";

const mode = process.argv.includes("--write") ? "write" : process.argv.includes("--check") ? "check" : null;
if (mode === null) {
  console.error("usage: generate/main.ts --write | --check");
  process.exit(2);
}
// --class C7[,C9]: regenerate only these classes; other classes' vectors are kept as they are on disk.
const classArg = process.argv.find((a) => a.startsWith("--class="))?.slice(8);
const only = classArg?.split(",").map((s) => s.trim().toUpperCase());
const files = await renderVectorFiles(await loadClasses(), only);
let differ = 0;
mkdirSync(vectorsDir, { recursive: true });
for (const [name, text] of files) {
  const p = join(vectorsDir, name);
  const old = existsSync(p) ? readFileSync(p, "utf8") : null;
  if (mode === "write") {
    if (old !== text) writeFileSync(p, text);
    console.log(`${old === text ? "unchanged" : "wrote    "} vectors/${name}`);
  } else if (old !== text) {
    differ++;
    console.error(`vectors/${name}: ${old === null ? "missing" : "differs from a fresh regeneration"}`);
  } else console.log(`vectors/${name}: byte-identical`);
}
if (differ > 0) {
  console.error(`${differ} vector file(s) differ; run npm run vectors and review the diff`);
  process.exit(1);
}
