// The data a report page embeds (issue 19): raw bytes only, never a figure the writer computed. The
// page decodes and re-verifies every byte itself (verify.ts, fleetcheck.ts); whatever it shows is
// what it parsed from these bytes.
import { fromBase64, toBase64 } from "@sbx/wire";

/** The format tag of the embedded data. */
export const REPORT_FORMAT = "sbx.report/1";

/** A run report's data: the record file, the objects it references, journals, trusted keys. */
export interface RunBundle {
  readonly format: typeof REPORT_FORMAT;
  readonly kind: "run";
  /** A label for the page title (the record's file name); not trusted for anything. */
  readonly name: string;
  /** The record file's bytes (§13.5), base64. */
  readonly record: string;
  /** Plain objects (store `objects/`), by address, base64 of their bytes. */
  readonly objects: Readonly<Record<string, string>>;
  /** Signed objects (store `signed/`), by payload address, base64 of the stored envelope's bytes. */
  readonly signed: Readonly<Record<string, string>>;
  /** Objects the writer left out (over the embedding limit), by address, with their stated size. */
  readonly omitted: Readonly<Record<string, string>>;
  /** Journals (§8) offered for the run's intervals: each the JSON text of an event list, base64. */
  readonly journals: readonly string[];
  /** The trusted host keys the writer was given (did:key); a reader may replace them. */
  readonly trust: readonly string[];
  /** The head the record must end at (`--head`: catches a record cut back at a segment boundary). */
  readonly expect_head?: string;
}

/** A fleet report's data: the fleet file's bytes (signed receipt and items). */
export interface FleetBundle {
  readonly format: typeof REPORT_FORMAT;
  readonly kind: "fleet";
  readonly name: string;
  /** The fleet file ({receipt, items}) as written by `sbx fleet build`, or a bare receipt, base64. */
  readonly fleet: string;
  readonly trust: readonly string[];
}

export type ReportBundle = RunBundle | FleetBundle;

/** b64 encodes bytes for embedding. */
export function b64(bytes: Uint8Array): string {
  return toBase64(bytes);
}

/** unb64 decodes embedded bytes; a malformed string yields null (the page reports it, never guesses). */
export function unb64(s: string | undefined): Uint8Array | null {
  return typeof s === "string" ? fromBase64(s) : null;
}
