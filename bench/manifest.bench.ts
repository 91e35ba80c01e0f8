// Manifest ingestion (§14): devcontainer.json files ingested per second over the devcontainer corpus (testdata/), against
// the anchor jsonc-parser's bare parseTree of the same files in the same run. Two sets: the 72 corpus
// files as written (every one refused, every offending member collected) and the ten declarative
// ones with their image pinned (accepted: normalised, canonicalised, BLAKE3-addressed). A third row
// signs and verifies a manifest. A fourth pair is pathological input: 1 MiB of repeated `/*` (one
// syntax error every few bytes), whose error positions must cost one pass, not one pass per error
// (§14.2): its anchor is the bare parseTree of the same bytes. Figures are medians.
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseTree, type ParseError } from "jsonc-parser";
import { testKey } from "@sbx/wire";
import { ingestManifest, signManifest, verifyManifest } from "@sbx/sandbox-attest/manifest";
import { median, rate, row, timeRuns } from "./measure.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dir = join(root, "testdata/corpus/devcontainer");
const RUNS = 15;
// Each timed run handles about this many files, so a run lasts long enough to time.
const PER_RUN = 1500;

function corpus(): { all: Uint8Array[]; declarative: Uint8Array[] } {
  const all = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => new Uint8Array(readFileSync(join(dir, f))));
  const declarative = readFileSync(join(dir, "INDEX.tsv"), "utf8")
    .trim()
    .split("\n")
    .map((l) => l.split("\t"))
    .filter((c) => c[4] === "declarative")
    .map((c) => {
      const text = readFileSync(join(dir, c[0] ?? ""), "utf8").replace(
        /"image"\s*:\s*"([^"]*)"/,
        (_m, ref: string) => {
          const name = ref.replace(/\$\{templateOption:[^}]*\}/g, "").replace(/:[^/:]*$/, "");
          return `"image": "${name}@sha256:${"ab".repeat(32)}"`;
        },
      );
      return new TextEncoder().encode(text);
    });
  return { all, declarative };
}

// The anchor: decode and parse each file, nothing else.
function bareParse(files: readonly Uint8Array[], repeat: number): void {
  const dec = new TextDecoder();
  for (let r = 0; r < repeat; r++)
    for (const f of files) {
      const errors: ParseError[] = [];
      parseTree(dec.decode(f), errors, { allowTrailingComma: true });
    }
}

function ingestAll(files: readonly Uint8Array[], repeat: number): void {
  for (let r = 0; r < repeat; r++)
    for (const f of files) {
      try {
        ingestManifest(f);
      } catch {
        // refusals are the expected outcome for the corpus as written
      }
    }
}

function seconds(fn: () => void): number {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

// The anchor and the ingester are timed alternately, run by run, so a change in machine load between
// them does not skew the ratio; each figure is the median of its runs.
function compare(label: string, files: readonly Uint8Array[]): void {
  const repeat = Math.ceil(PER_RUN / files.length);
  const n = files.length * repeat;
  bareParse(files, repeat);
  ingestAll(files, repeat);
  const p: number[] = [];
  const g: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    p.push(seconds(() => bareParse(files, repeat)));
    g.push(seconds(() => ingestAll(files, repeat)));
  }
  const parse = n / median(p);
  const ingest = n / median(g);
  row(`jsonc-parser parseTree, ${label}`, rate(parse), 1, "anchor");
  row(`ingestManifest, ${label}`, rate(ingest), ingest / parse, "jsonc-parser parseTree");
}

export default function manifestBench(): Promise<void> {
  const { all, declarative } = corpus();
  console.log(
    `  corpus: ${all.length} files (${all.reduce((s, f) => s + f.length, 0)} bytes); ${declarative.length} declarative, pinned`,
  );
  compare(`${all.length} files as written (refused)`, all);
  compare(`${declarative.length} declarative, pinned (accepted)`, declarative);
  const slashes = new TextEncoder().encode("/*".repeat(512 * 1024));
  const pp: number[] = [];
  const pg: number[] = [];
  for (let i = 0; i < 5; i++) {
    pp.push(seconds(() => bareParse([slashes], 1)));
    pg.push(seconds(() => ingestAll([slashes], 1)));
  }
  row("jsonc-parser parseTree, 1 MiB of /*", `${(median(pp) * 1000).toFixed(0)} ms`, 1, "anchor");
  row(
    "ingestManifest, 1 MiB of /* (refused)",
    `${(median(pg) * 1000).toFixed(0)} ms`,
    median(pg) / median(pp),
    "jsonc-parser parseTree (time ratio)",
  );
  const m = ingestManifest(declarative[0] ?? new Uint8Array());
  const steward = testKey("steward");
  const n = 200;
  const t = timeRuns(5, () => {
    for (let i = 0; i < n; i++) verifyManifest(signManifest(m, steward), [steward.did]);
  });
  row("signManifest + verifyManifest", rate(n / t));
  return Promise.resolve();
}
