// §8.2 Journal events: five kinds, each a canonical JSON object with a `type` and its position
// `seq`. Validation is strict: an unknown type, an unknown or missing member, or a value of the
// wrong form is refused before any hashing.
import { isAmount, isDigest, type Amount, type Digest, type Json } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";

/** A process began: its pid, argv as the host saw it, and the digest of the executed file. */
export interface ProcessStart {
  readonly type: "process.start";
  readonly seq: number;
  readonly pid: number;
  readonly argv: readonly string[];
  readonly binary: Digest;
}

/** How an exec reached the gate: the file itself, through a script's interpreter, or through the dynamic loader. */
export type ExecRoute = "direct" | "interpreter" | "loader";

/** The exec-policy rule that decided (§5.5.4), or why no digest rule could apply. */
export type ExecRuleName = "denied" | "allowed" | "not-allowed" | "default" | "timeout" | "changed";

/**
 * The exec gate's decision (§5.5.6) on one exec, in the form execpolicy's execDecisionEvent
 * writes: the policy's address, the file's digest (null only when none was obtained in time),
 * the path as the exec presented it, the route, the rule, the verdict, where the digest came from
 * (stat-keyed cache, fresh hash, or the timeout), and the pid.
 */
export interface ExecDecision {
  readonly type: "exec.decision";
  readonly seq: number;
  readonly policy: Digest;
  readonly digest: Digest | null;
  readonly path: string;
  readonly route: ExecRoute;
  readonly rule: ExecRuleName;
  readonly allowed: boolean;
  readonly source: "cache" | "hash" | "timeout";
  readonly pid: number;
}

/** A standard stream. */
export type StdioStream = "stdin" | "stdout" | "stderr";

/** One chunk of a standard stream, by digest; `chunk` counts from 0 within its stream. */
export interface StdioChunk {
  readonly type: "stdio.chunk";
  readonly seq: number;
  readonly stream: StdioStream;
  readonly chunk: number;
  readonly digest: Digest;
  readonly length: Amount;
}

/** A file the unit wrote, by the digest and size of its content when it was closed. */
export interface FileWrite {
  readonly type: "file.write";
  readonly seq: number;
  readonly path: string;
  readonly digest: Digest;
  readonly size: Amount;
}

/** A process ended: with an exit code, or by a signal (exactly one of the two is non-null). */
export interface ProcessExit {
  readonly type: "process.exit";
  readonly seq: number;
  readonly pid: number;
  readonly code: number | null;
  readonly signal: string | null;
}

/** One journal event (§8.2). */
export type JournalEvent = ProcessStart | ExecDecision | StdioChunk | FileWrite | ProcessExit;

/** The event types, in the order §8.2 lists them. */
export const EVENT_TYPES = [
  "process.start",
  "exec.decision",
  "stdio.chunk",
  "file.write",
  "process.exit",
] as const;

type Check = (v: Json | undefined) => boolean;
const isSeq: Check = (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isPid: Check = (v) => typeof v === "number" && Number.isSafeInteger(v) && v > 0;
// Well formed too: a lone surrogate has no canonical form (§2.1), and events are hashed later (journal.ts).
const isText: Check = (v) => typeof v === "string" && v.length > 0 && v.isWellFormed();
const oneOf =
  (...xs: string[]): Check =>
  (v) =>
    typeof v === "string" && xs.includes(v);
const isExitCode: Check = (v) =>
  v === null || (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 255);
const isSignal: Check = (v) => v === null || (typeof v === "string" && /^SIG[A-Z0-9]+$/.test(v));

/** The members of each event type and the form each must have. */
const SCHEMAS: Readonly<Record<JournalEvent["type"], Readonly<Record<string, Check>>>> = {
  "process.start": {
    pid: isPid,
    argv: (v) => Array.isArray(v) && v.every((a) => typeof a === "string" && a.isWellFormed()),
    binary: isDigest,
  },
  "exec.decision": {
    policy: isDigest,
    digest: (v) => v === null || isDigest(v),
    path: isText,
    route: oneOf("direct", "interpreter", "loader"),
    rule: oneOf("denied", "allowed", "not-allowed", "default", "timeout", "changed"),
    allowed: (v) => typeof v === "boolean",
    source: oneOf("cache", "hash", "timeout"),
    pid: isPid,
  },
  "stdio.chunk": {
    stream: oneOf("stdin", "stdout", "stderr"),
    chunk: isSeq,
    digest: isDigest,
    length: isAmount,
  },
  "file.write": { path: isText, digest: isDigest, size: isAmount },
  "process.exit": { pid: isPid, code: isExitCode, signal: isSignal },
};

/** Each schema's members as [name, check] pairs, listed once rather than on every event. */
const MEMBERS = new Map<string, readonly (readonly [string, Check])[]>(
  Object.entries(SCHEMAS).map(([t, schema]) => [t, Object.entries(schema)]),
);

function malformed(why: string): never {
  throw new SandboxAttestError("MalformedEvent", why);
}

/**
 * parseEvent checks one journal event (§8.2) and returns it typed. Refuses UnknownEventType for a
 * type outside §8.2, UnknownEventField for a member its type does not have, and MalformedEvent for
 * a non-object, a missing member, or a member of the wrong form (including an exit with both or
 * neither of code and signal).
 */
export function parseEvent(value: Json | undefined): JournalEvent {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    malformed("an event is a JSON object");
  const type = value.type;
  if (typeof type !== "string") malformed("an event needs a string `type`");
  if (!Object.hasOwn(SCHEMAS, type))
    throw new SandboxAttestError(
      "UnknownEventType",
      `unknown event type ${JSON.stringify(type).slice(0, 60)}`,
    );
  const schema = SCHEMAS[type as JournalEvent["type"]];
  for (const k of Object.keys(value))
    if (k !== "type" && k !== "seq" && !Object.hasOwn(schema, k))
      throw new SandboxAttestError(
        "UnknownEventField",
        `${type} has no member ${JSON.stringify(k).slice(0, 60)}`,
      );
  if (!isSeq(value.seq)) malformed("`seq` must be a non-negative integer");
  for (const [k, ok] of MEMBERS.get(type) ?? []) {
    if (!Object.hasOwn(value, k)) malformed(`${type} needs \`${k}\``);
    if (!ok(value[k])) malformed(`${type}.${k} has the wrong form`);
  }
  if (type === "process.exit" && (value.code === null) === (value.signal === null))
    malformed("process.exit has exactly one of code and signal");
  // A copy, so later changes to the caller's object cannot reach a journaled event.
  return (Array.isArray(value.argv)
    ? { ...value, argv: [...value.argv] }
    : { ...value }) as unknown as JournalEvent;
}
