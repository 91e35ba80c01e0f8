// §7.1–§7.2 The execution attestation: an in-toto Statement v1 whose one subject is the unit and
// whose predicate binds everything one active interval of it depends on.
import { isAmount, parseAmount, type Amount, type Digest, type JsonObject } from "@sbx/wire";
import { LEVELS, type Level } from "../unit/descriptor.ts";
import { fields } from "../unit/fields.ts";
import { PROVENANCES, type Provenance } from "../energy/types.ts";

/** in-toto Statement v1 `_type` (§7.1). */
export const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
/** The predicate type of an execution attestation (§7.2). */
export const PREDICATE_TYPE = "https://sandbox-attest.dev/execution/v1";
/** The DSSE payloadType in-toto requires for statements (§7.3). */
export const ATTESTATION_PAYLOAD_TYPE = "application/vnd.in-toto+json";
/** The name of the statement's one subject, the unit (§7.1). */
export const SUBJECT_NAME = "unit";

/** The resource limits (§5.3) an outcome can record as hit, in the order §7.2 fixes. */
export const LIMIT_NAMES = ["disk", "memory", "pids"] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** What an interval that ran may add to its outcome (§7.2). */
interface RanOutcome {
  /** The limits it ran into (non-empty, in LIMIT_NAMES order). */
  readonly limits?: readonly LimitName[];
  /**
   * Why the host stopped a unit that exited or was signaled after the host told it to stop
   * (`BudgetExhausted`: its grants' budget, jcp §4.3); absent when the host did not stop it.
   */
  readonly stopped?: string;
  /**
   * The µJ the interval used beyond what was left of its grants' budget when it was sealed (an
   * amount above 0, jcp §4.3 "Overshoot"); absent when it stayed within.
   */
  readonly overshoot_uj?: Amount;
}

/** How the interval ended (§7.2): exited with a code, killed by a signal, or never started. */
export type Outcome =
  | ({ readonly status: "exited"; readonly exit_code: number } & RanOutcome)
  | ({ readonly status: "signaled"; readonly signal: string } & RanOutcome)
  | { readonly status: "spawn_failed"; readonly reason: string };

/** The execution predicate (§7.2). `audit_prev` and `audit_seq` come together or not at all (§7.7). */
export interface ExecutionPredicate {
  readonly unit_id: Digest;
  readonly grants_id: Digest;
  readonly manifest: Digest;
  readonly exec_policy: Digest;
  readonly energy: { readonly receipt: Digest; readonly total_uj: Amount; readonly provenance: Provenance };
  readonly journal: { readonly root: Digest; readonly events: number };
  readonly outcome: Outcome;
  readonly interval: { readonly start_ms: number; readonly end_ms: number };
  readonly host: string;
  readonly level: Level;
  readonly audit_prev?: Digest;
  readonly audit_seq?: number;
  readonly run_head?: Digest;
}

/**
 * The statement's one subject (§7.1): the unit, by the BLAKE3 (its `unit_id`) and the SHA-256 of
 * its descriptor's canonical bytes, both as 64 lowercase hex digits.
 */
export interface Subject {
  readonly name: typeof SUBJECT_NAME;
  readonly digest: { readonly blake3: string; readonly sha256: string };
}

/** The statement (§7.1). */
export interface Statement {
  readonly _type: typeof STATEMENT_TYPE;
  readonly subject: readonly [Subject];
  readonly predicateType: typeof PREDICATE_TYPE;
  readonly predicate: ExecutionPredicate;
}

const REQUIRED = [
  "unit_id",
  "grants_id",
  "manifest",
  "exec_policy",
  "energy",
  "journal",
  "outcome",
  "interval",
  "host",
  "level",
] as const;
const OPTIONAL = ["audit_prev", "audit_seq", "run_head"] as const;

/**
 * parseStatement checks a statement's shape (§7.1, the profile of §7.6): `_type`, exactly one
 * subject named "unit" with exactly the members `name` and `digest`, whose digest set is exactly
 * `blake3` and `sha256` (a missing or extra algorithm is refused), each 64 lowercase hex, the
 * predicate type, and no other member (`BadStatement`); then the predicate (`BadPredicate`, see
 * parsePredicate); and last that the subject's `blake3` is the predicate's `unit_id`
 * (`SubjectMismatch`). The `sha256` names the same bytes; a verifier holding the unit descriptor
 * checks it (verifyAttestation's `unit` binding).
 */
export function parseStatement(value: unknown): Statement {
  const f = fields("BadStatement");
  const o = f.obj(value, "statement", ["_type", "subject", "predicateType", "predicate"]);
  if (o._type !== STATEMENT_TYPE) f.fail(`_type must be ${STATEMENT_TYPE}`);
  if (o.predicateType !== PREDICATE_TYPE) f.fail(`predicateType must be ${PREDICATE_TYPE}`);
  if (!Array.isArray(o.subject) || o.subject.length !== 1) f.fail("subject must hold exactly one entry");
  const s = f.obj((o.subject as unknown[])[0], "subject[0]", ["name", "digest"]);
  if (s.name !== SUBJECT_NAME) f.fail(`subject[0].name must be "${SUBJECT_NAME}"`);
  const d = f.obj(s.digest, "subject[0].digest", ["blake3", "sha256"]);
  for (const alg of ["blake3", "sha256"] as const)
    if (typeof d[alg] !== "string" || !/^[0-9a-f]{64}$/.test(d[alg]))
      f.fail(`subject[0].digest.${alg} must be 64 lowercase hex`);
  const predicate = parsePredicate(o.predicate);
  if (`blake3:${d.blake3 as string}` !== predicate.unit_id)
    fields("SubjectMismatch").fail("subject digest is not the predicate's unit_id");
  return value as Statement;
}

/**
 * parsePredicate checks the execution predicate (§7.2) and refuses with `BadPredicate`: a missing or
 * unknown member at any depth, a malformed digest, amount, provenance, level or did:key, an outcome
 * whose members do not fit its status, an interval that ends before it starts, and `audit_prev`
 * without `audit_seq` or the reverse.
 */
export function parsePredicate(value: unknown): ExecutionPredicate {
  const f = fields("BadPredicate");
  const p = f.obj(value, "predicate", REQUIRED, OPTIONAL);
  for (const k of ["unit_id", "grants_id", "manifest", "exec_policy"] as const)
    f.digest(p[k], `predicate.${k}`);
  const e = f.obj(p.energy, "predicate.energy", ["receipt", "total_uj", "provenance"]);
  f.digest(e.receipt, "energy.receipt");
  if (!isAmount(e.total_uj)) f.fail("energy.total_uj must be a decimal amount string");
  f.oneOf(e.provenance, "energy.provenance", PROVENANCES);
  const j = f.obj(p.journal, "predicate.journal", ["root", "events"]);
  f.digest(j.root, "journal.root");
  f.int(j.events, "journal.events");
  parseOutcome(p.outcome);
  const iv = f.obj(p.interval, "predicate.interval", ["start_ms", "end_ms"]);
  if (f.int(iv.end_ms, "interval.end_ms") < f.int(iv.start_ms, "interval.start_ms"))
    f.fail("interval ends before it starts");
  f.did(p.host, "predicate.host");
  f.oneOf(p.level, "predicate.level", LEVELS);
  parseAuditLink(p);
  if (p.run_head !== undefined) f.digest(p.run_head, "predicate.run_head");
  return value as ExecutionPredicate;
}

function parseAuditLink(p: JsonObject): void {
  const f = fields("BadPredicate");
  if ((p.audit_prev === undefined) !== (p.audit_seq === undefined))
    f.fail("audit_prev and audit_seq come together");
  if (p.audit_prev !== undefined) f.digest(p.audit_prev, "predicate.audit_prev");
  if (p.audit_seq !== undefined) f.int(p.audit_seq, "predicate.audit_seq", 1);
}

function parseOutcome(v: unknown): void {
  const f = fields("BadPredicate");
  const ran = ["limits", "stopped", "overshoot_uj"];
  const o = f.obj(v, "predicate.outcome", ["status"], ["exit_code", "signal", "reason", ...ran]);
  const status = o.status;
  if (status === "exited")
    f.int(f.obj(v, "outcome", ["status", "exit_code"], ran).exit_code, "outcome.exit_code", 0, 255);
  else if (status === "signaled") {
    const s = f.obj(v, "outcome", ["status", "signal"], ran).signal;
    if (typeof s !== "string" || !/^SIG[A-Z0-9]{1,12}$/.test(s))
      f.fail("outcome.signal must be a signal name such as SIGKILL");
  } else if (status === "spawn_failed")
    f.str(f.obj(v, "outcome", ["status", "reason"]).reason, "outcome.reason", 256);
  else f.fail("outcome.status must be exited, signaled or spawn_failed");
  const stopped = o.stopped;
  if (stopped !== undefined && (typeof stopped !== "string" || !/^[A-Z][A-Za-z]{0,63}$/.test(stopped)))
    f.fail("outcome.stopped must be a code such as BudgetExhausted");
  if (o.limits !== undefined) parseLimits(o.limits);
  const over = o.overshoot_uj;
  if (over !== undefined && (!isAmount(over) || parseAmount(over) === 0n))
    f.fail("outcome.overshoot_uj must be a decimal amount above 0");
}

/** §7.2 item 2: a non-empty array of distinct limit names, in LIMIT_NAMES order. */
function parseLimits(v: unknown): void {
  const f = fields("BadPredicate");
  if (!Array.isArray(v) || v.length === 0) f.fail("outcome.limits must be a non-empty array");
  let last = -1;
  for (const x of v as unknown[]) {
    const i = (LIMIT_NAMES as readonly unknown[]).indexOf(x);
    if (i <= last)
      f.fail(`outcome.limits must list distinct names from ${LIMIT_NAMES.join(", ")} in that order`);
    last = i;
  }
}
