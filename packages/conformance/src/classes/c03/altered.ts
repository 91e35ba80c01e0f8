// C3: every leaf of a signed statement altered (kept signature, re-signed), members removed or added.
import { canonicalBytes, toBase64, type Envelope, type Json } from "@sbx/wire";
import { errCase, okCase } from "../../generate/build.ts";
import type { Vector } from "../../types.ts";
import { alterLeaf, deletePath, getPath, leafPaths, setPath } from "./paths.ts";
import { C, attest, d, host, okOut, predicate, signJson, statement, unit, verifyInput } from "./fixture.ts";

/** Every leaf of the signed statement altered, the signature kept: BadSignature for each. */
export function unsignedAlterations(): Vector[] {
  const env = attest(predicate(), host);
  const base = statement();
  return leafPaths(base).map((path) => {
    const altered = setPath(base, path, alterLeaf(getPath(base, path)));
    const e: Envelope = { ...env, payload: toBase64(canonicalBytes(altered)) };
    return errCase(
      C,
      `c3-altered-${path.join(".")}`,
      `${path.join(".")} altered after signing`,
      "attestation.verify",
      verifyInput(e),
      "BadSignature",
    );
  });
}

// The code a re-signed alteration of each leaf gets when every binding is given (§7.4, §7.5).
const RESIGNED: Record<string, string> = {
  _type: "BadStatement",
  predicateType: "BadStatement",
  "subject.0.name": "BadStatement",
  "subject.0.digest.blake3": "SubjectMismatch",
  // The sha256 names the same bytes; given the unit descriptor (a binding), a wrong one is seen.
  "subject.0.digest.sha256": "SubjectMismatch",
  "predicate.unit_id": "SubjectMismatch",
  "predicate.grants_id": "GrantsMismatch",
  "predicate.manifest": "ManifestMismatch",
  "predicate.exec_policy": "PolicyMismatch",
  "predicate.energy.receipt": "ReceiptMismatch",
  "predicate.energy.total_uj": "ReceiptMismatch",
  "predicate.energy.provenance": "BadPredicate",
  "predicate.journal.root": "JournalMismatch",
  "predicate.journal.events": "JournalMismatch",
  "predicate.outcome.status": "BadPredicate",
  "predicate.outcome.exit_code": "ok",
  "predicate.interval.start_ms": "ok",
  "predicate.interval.end_ms": "ok",
  "predicate.host": "SignerNotHost",
  "predicate.level": "BadPredicate",
  "predicate.audit_prev": "AuditPrevMismatch",
  "predicate.audit_seq": "ok",
  "predicate.run_head": "RunHeadMismatch",
};

/** Every leaf altered and re-signed by the host: refused by shape or by the binding it breaks. */
export function resignedAlterations(): Vector[] {
  const base = statement();
  return leafPaths(base).map((path) => {
    const p = path.join(".");
    const want = RESIGNED[p];
    if (want === undefined) throw new Error(`c03: no expected code for ${p}`);
    const e = signJson(setPath(base, path, alterLeaf(getPath(base, path))));
    const id = `c3-resigned-${p}`;
    const desc = `${p} altered and re-signed by the host, every binding given`;
    return want === "ok"
      ? okCase(
          C,
          id,
          `${desc}: not a binding, the host's own statement`,
          "attestation.verify",
          verifyInput(e),
          okOut(e),
        )
      : errCase(C, id, desc, "attestation.verify", verifyInput(e), want);
  });
}

/** Each member removed, and an unknown member added at each level, re-signed (§7.1, §7.2). */
export function shapeVectors(): Vector[] {
  const base = statement();
  const out: Vector[] = [];
  for (const path of leafPaths(base)) {
    const p = path.join(".");
    if (path[0] === "subject") continue;
    const code =
      path[0] !== "predicate"
        ? "BadStatement"
        : p === "predicate.run_head"
          ? "RunHeadMismatch"
          : "BadPredicate";
    out.push(
      errCase(
        C,
        `c3-missing-${p}`,
        `${p} removed, re-signed`,
        "attestation.verify",
        verifyInput(signJson(deletePath(base, path))),
        code,
      ),
    );
  }
  const levels: [string, string[], string][] = [
    ["statement", [], "BadStatement"],
    ["subject", ["subject", "0"], "BadStatement"],
    ["digest", ["subject", "0", "digest"], "BadStatement"],
    ["predicate", ["predicate"], "BadPredicate"],
    ["energy", ["predicate", "energy"], "BadPredicate"],
    ["journal", ["predicate", "journal"], "BadPredicate"],
    ["outcome", ["predicate", "outcome"], "BadPredicate"],
    ["interval", ["predicate", "interval"], "BadPredicate"],
  ];
  for (const [id, path, code] of levels)
    out.push(
      errCase(
        C,
        `c3-unknown-member-${id}`,
        `an unknown member in ${id}, re-signed`,
        "attestation.verify",
        verifyInput(signJson(setPath(base, [...path, "x_extra"], 1))),
        code,
      ),
    );
  out.push(
    errCase(
      C,
      "c3-two-subjects",
      "a second subject, re-signed",
      "attestation.verify",
      verifyInput(
        signJson({
          ...base,
          subject: [...(base.subject as Json[]), { name: "other", digest: { blake3: d("x").slice(7) } }],
        }),
      ),
      "BadStatement",
    ),
  );
  out.push(...subjectVectors(base));
  out.push(
    errCase(
      C,
      "c3-interval-reversed",
      "interval ends before it starts, re-signed",
      "attestation.verify",
      verifyInput(signJson(setPath(base, ["predicate", "interval"], { start_ms: 10, end_ms: 9 }))),
      "BadPredicate",
    ),
  );
  out.push(
    errCase(
      C,
      "c3-outcome-mixed",
      "exited outcome carrying a signal, re-signed",
      "attestation.verify",
      verifyInput(
        signJson(
          setPath(base, ["predicate", "outcome"], { status: "exited", exit_code: 0, signal: "SIGTERM" }),
        ),
      ),
      "BadPredicate",
    ),
  );
  // §7.2: `stopped` only on exited or signaled outcomes, and only a code.
  for (const [id, desc, outcome] of [
    [
      "spawn-failed",
      "spawn_failed outcome carrying stopped",
      { status: "spawn_failed", reason: "x", stopped: "BudgetExhausted" },
    ],
    ["lowercase", "stopped that is not a code", { status: "signaled", signal: "SIGTERM", stopped: "budget" }],
    ["number", "stopped as a number", { status: "exited", exit_code: 0, stopped: 1 }],
  ] as const)
    out.push(
      errCase(
        C,
        `c3-outcome-stopped-${id}`,
        `${desc}, re-signed`,
        "attestation.verify",
        verifyInput(signJson(setPath(base, ["predicate", "outcome"], outcome))),
        "BadPredicate",
      ),
    );
  // §7.2 item 2: overshoot_uj is an amount above 0, and only on an interval that ran.
  for (const [id, desc, outcome] of [
    ["zero", "overshoot_uj of 0", { status: "exited", exit_code: 0, overshoot_uj: "0" }],
    ["number", "overshoot_uj as a JSON number", { status: "exited", exit_code: 0, overshoot_uj: 12 }],
    ["negative", "overshoot_uj negative", { status: "signaled", signal: "SIGKILL", overshoot_uj: "-1" }],
    [
      "spawn-failed",
      "overshoot_uj on an interval that never started",
      { status: "spawn_failed", reason: "ENOENT", overshoot_uj: "12" },
    ],
  ] as const)
    out.push(
      errCase(
        C,
        `c3-outcome-overshoot-${id}`,
        `${desc}, re-signed`,
        "attestation.verify",
        verifyInput(signJson(setPath(base, ["predicate", "outcome"], outcome))),
        "BadPredicate",
      ),
    );
  // §7.2 item 2: limits are a non-empty, ordered set of known names, and only on an interval that ran.
  const limits: [string, string, unknown][] = [
    ["empty", "an empty limits array", { status: "exited", exit_code: 0, limits: [] }],
    ["unknown", "an unknown limit name", { status: "exited", exit_code: 0, limits: ["cpu"] }],
    [
      "order",
      "limit names out of order",
      { status: "signaled", signal: "SIGKILL", limits: ["pids", "memory"] },
    ],
    [
      "duplicate",
      "a limit named twice",
      { status: "signaled", signal: "SIGKILL", limits: ["memory", "memory"] },
    ],
    [
      "spawn-failed",
      "limits on an interval that never started",
      { status: "spawn_failed", reason: "ENOENT", limits: ["memory"] },
    ],
    ["not-array", "limits as a string", { status: "exited", exit_code: 0, limits: "memory" }],
  ];
  for (const [id, desc, outcome] of limits)
    out.push(
      errCase(
        C,
        `c3-limits-${id}`,
        `${desc}, re-signed`,
        "attestation.verify",
        verifyInput(signJson(setPath(base, ["predicate", "outcome"], outcome as Json))),
        "BadPredicate",
      ),
    );
  out.push(
    errCase(
      C,
      "c3-exit-code-256",
      "exit code out of range, re-signed",
      "attestation.verify",
      verifyInput(signJson(setPath(base, ["predicate", "outcome", "exit_code"], 256))),
      "BadPredicate",
    ),
  );
  out.push(
    errCase(
      C,
      "c3-total-number",
      "total_uj as a JSON number, re-signed",
      "attestation.verify",
      verifyInput(signJson(setPath(base, ["predicate", "energy", "total_uj"], 2750000))),
      "BadPredicate",
    ),
  );
  out.push(
    errCase(
      C,
      "c3-audit-seq-zero",
      "audit_seq 0, re-signed",
      "attestation.verify",
      verifyInput(signJson(setPath(base, ["predicate", "audit_seq"], 0))),
      "BadPredicate",
    ),
  );
  return out;
}

/** §7.1, §7.6: the subject's digest set is exactly blake3 and sha256; a profile stricter than in-toto. */
function subjectVectors(base: Json): Vector[] {
  const digest = getPath(base, ["subject", "0", "digest"]) as { blake3: string; sha256: string };
  const withDigest = (v: Json): Envelope => signJson(setPath(base, ["subject", "0", "digest"], v));
  const refused: [string, string, Json][] = [
    ["sha256-only", "subject digest holds sha256 alone", { sha256: digest.sha256 }],
    ["blake3-only", "subject digest holds blake3 alone (no sha256)", { blake3: digest.blake3 }],
    [
      "sha512-added",
      "a third algorithm in the digest set",
      { ...digest, sha512: digest.sha256 + digest.sha256 },
    ],
    ["sha256-uppercase", "sha256 in uppercase hex", { ...digest, sha256: digest.sha256.toUpperCase() }],
    ["sha256-short", "sha256 of 63 hex digits", { ...digest, sha256: digest.sha256.slice(1) }],
  ];
  return [
    ...refused.map(([id, desc, v]) =>
      errCase(
        C,
        `c3-subject-${id}`,
        `${desc}, re-signed`,
        "attestation.verify",
        verifyInput(withDigest(v)),
        "BadStatement",
      ),
    ),
    errCase(
      C,
      "c3-subject-uri",
      "an in-toto ResourceDescriptor member (uri) in the subject, re-signed",
      "attestation.verify",
      verifyInput(signJson(setPath(base, ["subject", "0", "uri"], "https://example.com/unit"))),
      "BadStatement",
    ),
    okCase(
      C,
      "c3-subject-sha256-unbound",
      "a wrong sha256 beside the right blake3 passes when the verifier lacks the unit descriptor",
      "attestation.verify",
      verifyInput(withDigest({ ...digest, sha256: d("x").slice(7) }), {}),
      okOut(withDigest({ ...digest, sha256: d("x").slice(7) })),
    ),
    errCase(
      C,
      "c3-subject-sha256-bound",
      "a wrong sha256 beside the right blake3 is refused given the unit descriptor",
      "attestation.verify",
      verifyInput(withDigest({ ...digest, sha256: d("x").slice(7) }), { unit: unit as unknown as Json }),
      "SubjectMismatch",
    ),
  ];
}
