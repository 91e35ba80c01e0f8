// §5.5.6 The journal record of one exec decision, and its §8 event form.
import { isDigest, type Digest, type JsonObject } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import type { ExecRule } from "./decide.ts";

/** How the file came to be executed (§5.5.1). */
export type ExecRoute = "direct" | "interpreter" | "loader";
/** Where the decision came from: the stat-keyed cache, a fresh hash, or the timeout (no digest). */
export type ExecSource = "cache" | "hash" | "timeout";

/** One exec decision as the gate saw it (§5.5.6). */
export interface ExecDecision {
  /** BLAKE3 of the file's bytes; null only when no digest was obtained in time (rule "timeout"). */
  readonly digest: Digest | null;
  /** The path as the kernel resolved it inside the sandbox. */
  readonly path: string;
  readonly route: ExecRoute;
  readonly rule: ExecRule | "timeout" | "changed";
  readonly allowed: boolean;
  readonly source: ExecSource;
  /** The process's id as the host sees it. */
  readonly pid: number;
}

const ROUTES: readonly string[] = ["direct", "interpreter", "loader"];
const RULES: readonly string[] = ["denied", "allowed", "not-allowed", "default", "timeout", "changed"];
const SOURCES: readonly string[] = ["cache", "hash", "timeout"];

/** execDecisionEvent turns a decision into its journal event (§8 event type "exec.decision"). */
export function execDecisionEvent(d: ExecDecision, policy: Digest): JsonObject {
  return {
    type: "exec.decision",
    policy,
    digest: d.digest,
    path: d.path,
    route: d.route,
    rule: d.rule,
    allowed: d.allowed,
    source: d.source,
    pid: d.pid,
  };
}

/**
 * checkDecision refuses a decision record that is malformed (`BadExecPolicy`) or inconsistent:
 * an allowed decision without a digest, or a rule that contradicts `allowed` (`ExecPolicyMismatch`).
 */
export function checkDecision(d: ExecDecision): ExecDecision {
  if (
    !ROUTES.includes(d.route) ||
    !RULES.includes(d.rule) ||
    !SOURCES.includes(d.source) ||
    typeof d.path !== "string"
  )
    throw new SandboxAttestError("BadExecPolicy", "malformed exec decision");
  if (d.digest !== null && !isDigest(d.digest))
    throw new SandboxAttestError("ExecPolicyBadDigest", "decision digest");
  const mustAllow = d.rule === "allowed" || d.rule === "default";
  if (mustAllow !== d.allowed || (d.allowed && d.digest === null))
    throw new SandboxAttestError("ExecPolicyMismatch", `rule ${d.rule} with allowed=${d.allowed}`);
  return d;
}
