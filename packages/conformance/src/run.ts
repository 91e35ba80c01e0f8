// Runs vectors and live cases through an adapter and tallies per class (sandbox-attest §10–§11).
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { canonicalize } from "@sbx/wire";
import { vectorsDir } from "./paths.ts";
import { inScope } from "./adapter/capabilities.ts";
import type { Adapter, Capabilities, ClassId, ConformanceClass, OpResult, Vector } from "./types.ts";

/** The tally of one class. */
export interface ClassTally {
  readonly id: ClassId;
  readonly title: string;
  passed: number;
  failed: number;
  skipped: number;
  readonly failures: string[];
  /** What of this class the adapter declared out of scope (§11.2): "class" or "live cases". */
  readonly outOfScope: string[];
}

/** The vectors file as written by the generator. */
export interface VectorFile {
  readonly version: 1;
  readonly keys: Readonly<Record<string, string>>;
  readonly vectors: readonly Vector[];
}

/** readVectorFile loads vectors/<name>; a missing file yields no vectors. */
export function readVectorFile(name: string): Vector[] {
  const p = join(vectorsDir, name);
  if (!existsSync(p)) return [];
  return [...(JSON.parse(readFileSync(p, "utf8")) as VectorFile).vectors];
}

/** judge compares an adapter's result with what the vector expects; returns null when it matches. */
export function judge(v: Vector, r: OpResult): string | null {
  if (v.expect === "ok") {
    if (!r.ok) return `got error ${r.error}, want ok`;
    if (v.output !== undefined && canonicalize(r.output) !== canonicalize(v.output))
      return `got output ${canonicalize(r.output).slice(0, 200)}, want ${canonicalize(v.output).slice(0, 200)}`;
    return null;
  }
  if (r.ok) return `got ok, want error ${v.expect.error}`;
  return r.error === v.expect.error ? null : `got error ${r.error}, want ${v.expect.error}`;
}

/**
 * runClass runs one class's vectors (from its file) and live cases. A class the adapter's
 * capabilities do not claim runs nothing and is marked out of scope; so are its live cases when
 * the adapter declares no live cases. Nothing out of scope counts as passed or skipped.
 */
export async function runClass(
  c: ConformanceClass,
  adapter: Adapter,
  opts: { live: boolean; caps: Capabilities },
): Promise<ClassTally> {
  const t: ClassTally = {
    id: c.id,
    title: c.title,
    passed: 0,
    failed: 0,
    skipped: 0,
    failures: [],
    outOfScope: [],
  };
  if (!inScope(opts.caps, c.id)) {
    t.outOfScope.push("class");
    return t;
  }
  for (const v of readVectorFile(c.file).filter((x) => x.class === c.id)) {
    const why = judge(v, await adapter.call(v.op, v.input));
    if (why === null) t.passed++;
    else {
      t.failed++;
      t.failures.push(`${v.id}: ${why}`);
    }
  }
  if (c.live) {
    if (!opts.caps.live) t.outOfScope.push("live cases");
    else if (!opts.live) t.skipped++;
    else
      for (const lc of await c.live()) {
        if (lc.passed) t.passed++;
        else {
          t.failed++;
          t.failures.push(`${lc.id} (live): ${lc.detail ?? "failed"}`);
        }
      }
  }
  return t;
}
