// The conformance model (sandbox-attest §11): language-neutral vectors, classes, and the adapter an
// implementation is driven through.
import type { Json } from "@sbx/wire";

/** A conformance class id, C1–C21 (sandbox-attest §10, jcp §5). */
export type ClassId = `C${number}`;

/** What a vector expects: success (optionally with an exact output) or a refusal by code. */
export type Expect = "ok" | { readonly error: string };

/**
 * One wire vector: `op` names the operation the adapter performs on `input`. When `expect` is "ok"
 * and `output` is present, the adapter's output must equal it exactly (canonical comparison).
 */
export interface Vector {
  readonly id: string;
  readonly class: ClassId;
  readonly desc: string;
  readonly op: string;
  readonly input: Json;
  readonly expect: Expect;
  readonly output?: Json;
}

/** What an implementation answers for one operation. */
export type OpResult =
  { readonly ok: true; readonly output: Json } | { readonly ok: false; readonly error: string };

/**
 * What an implementation declares it implements (§11.2, op `adapter.capabilities`): the classes
 * it claims, or "all", and whether the class modules' live cases (real processes on this host)
 * belong to it. A class it does not claim is out of scope: the harness runs nothing of it, prints
 * it as out of scope, and counts nothing of it as passed.
 */
export interface Capabilities {
  readonly classes: "all" | readonly ClassId[];
  readonly live: boolean;
}

/** An implementation under test, in process or behind the JSON-lines subprocess protocol. */
export interface Adapter {
  readonly name: string;
  /** The implementation's declared capabilities; one that declares none claims everything. */
  capabilities(): Promise<Capabilities>;
  call(op: string, input: Json): Promise<OpResult>;
  close(): Promise<void>;
}

/**
 * A handler implements one op in process. It returns the output, or throws an error carrying a
 * string `code` (the spec's name for the failure); the in-process adapter turns that into a result.
 */
export type Handler = (input: Json) => Json | Promise<Json>;

/** The outcome of one live case: a case that runs real processes rather than a vector. */
export interface LiveCase {
  readonly id: string;
  readonly desc: string;
  readonly passed: boolean;
  readonly detail?: string;
}

/**
 * A conformance class module (`classes/cNN.ts` or `classes/cNN/index.ts`): its vector generator,
 * the in-process handlers of its ops, and optionally live cases run against the real host.
 */
export interface ConformanceClass {
  readonly id: ClassId;
  readonly title: string;
  /** The vectors file its vectors belong to, e.g. "core.json". */
  readonly file: "core.json" | "grants.json" | "durable.json" | "standing.json";
  /** Produces the class's vectors deterministically from the fixed test keys. */
  generate(): Vector[];
  /** The reference implementation's handlers for the ops this class's vectors use. */
  readonly ops: Readonly<Record<string, Handler>>;
  /** Live cases (real processes on this host); absent for wire-only classes. */
  readonly live?: () => Promise<LiveCase[]>;
}
