// Discovers the class modules in ./classes: `cNN.ts` or `cNN/index.ts`, each exporting `klass`.
import { readdirSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ConformanceClass } from "./types.ts";

const here = dirname(fileURLToPath(import.meta.url));

/** classNumber reads 6 from "C6". */
export function classNumber(id: string): number {
  return Number(id.slice(1));
}

/** loadClasses imports every class module, ordered C1…C21. */
export async function loadClasses(): Promise<ConformanceClass[]> {
  const dir = join(here, "classes");
  const out: ConformanceClass[] = [];
  for (const name of readdirSync(dir).sort()) {
    const m = /^c(\d\d)(\.ts)?$/.exec(name);
    if (!m) continue;
    const file = m[2] ? join(dir, name) : join(dir, name, "index.ts");
    if (!existsSync(file)) continue;
    const mod = (await import(pathToFileURL(file).href)) as { klass?: ConformanceClass };
    if (!mod.klass) throw new Error(`${file} exports no klass`);
    out.push(mod.klass);
  }
  return out.sort((a, b) => classNumber(a.id) - classNumber(b.id));
}
