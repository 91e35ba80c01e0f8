// §7.4–§7.5 Verification: the envelope's signature by the host the predicate names, the canonical
// payload, the strict shape, and every binding the verifier supplies, each with its own code.
import { openEnvelope, type Digest, type Json } from "@sbx/wire";
import { SandboxAttestError, type SandboxAttestErrorCode } from "../errors.ts";
import { unitSubject } from "./sign.ts";
import {
  ATTESTATION_PAYLOAD_TYPE,
  parseStatement,
  type ExecutionPredicate,
  type Statement,
} from "./statement.ts";

/**
 * What the verifier already knows (§7.5). Each member given must equal the attestation's; `null`
 * for `runHead` or `auditPrev` means the attestation must not carry one.
 */
export interface AttestationExpect {
  readonly host?: string;
  readonly unitId?: Digest;
  /** The unit descriptor itself: its address must be `unit_id` and its SHA-256 the subject's. */
  readonly unit?: Json;
  readonly grantsId?: Digest;
  readonly manifest?: Digest;
  readonly policy?: Digest;
  readonly receipt?: Digest;
  readonly totalUj?: string;
  readonly journalRoot?: Digest;
  readonly journalEvents?: number;
  readonly runHead?: Digest | null;
  readonly auditPrev?: Digest | null;
}

/** A verified attestation: the statement, its predicate, its address and its signers. */
export interface VerifiedAttestation {
  readonly statement: Statement;
  readonly predicate: ExecutionPredicate;
  readonly address: Digest;
  readonly signers: readonly string[];
}

/** Largest attestation payload accepted (§7.4). */
export const MAX_ATTESTATION_BYTES = 64 * 1024;

/**
 * verifyAttestation verifies an execution attestation (§7.4) and its bindings (§7.5), in this order:
 * the envelope and every signature (wire codes `BadEnvelope`, `WrongPayloadType`, `OversizeInput`,
 * `BadDidKey`, `BadSignature`), the payload's canonical form (`NotCanonical` and the strict-parse
 * codes), the statement and predicate shape (`BadStatement`, `BadPredicate`, `SubjectMismatch`), a
 * valid signature by `predicate.host` (`SignerNotHost`), then each binding in `expect`:
 * `HostMismatch`, `UnitMismatch` (then, given the descriptor `unit`, `UnitMismatch` for one of
 * another address and `SubjectMismatch` for a subject `sha256` that is not its SHA-256), `GrantsMismatch`, `ManifestMismatch`, `PolicyMismatch`,
 * `ReceiptMismatch` (address or total), `JournalMismatch` (root or event count), `RunHeadMismatch`,
 * `AuditPrevMismatch`.
 */
export function verifyAttestation(env: unknown, expect: AttestationExpect = {}): VerifiedAttestation {
  const opened = openEnvelope(env, {
    payloadType: ATTESTATION_PAYLOAD_TYPE,
    maxBytes: MAX_ATTESTATION_BYTES,
  });
  const statement = parseStatement(opened.payload);
  const p = statement.predicate;
  if (!opened.signers.includes(p.host))
    throw new SandboxAttestError(
      "SignerNotHost",
      `signed by ${opened.signers.join(", ")}, predicate host is ${p.host}`,
    );
  checkBindings(statement, expect);
  return { statement, predicate: p, address: opened.address, signers: opened.signers };
}

type Check = readonly [
  SandboxAttestErrorCode,
  string,
  string | number | null | undefined,
  string | number | null,
];

function checkUnit(statement: Statement, unit: Json): void {
  const want = unitSubject(unit).digest;
  if (`blake3:${want.blake3}` !== statement.predicate.unit_id)
    throw new SandboxAttestError("UnitMismatch", "the unit descriptor given is not the attested unit_id");
  if (want.sha256 !== statement.subject[0].digest.sha256)
    throw new SandboxAttestError(
      "SubjectMismatch",
      "subject sha256 is not the SHA-256 of the unit descriptor",
    );
}

function checkBindings(statement: Statement, x: AttestationExpect): void {
  const p = statement.predicate;
  check([
    ["HostMismatch", "host", x.host, p.host],
    ["UnitMismatch", "unit_id", x.unitId, p.unit_id],
  ]);
  if (x.unit !== undefined) checkUnit(statement, x.unit);
  check([
    ["GrantsMismatch", "grants_id", x.grantsId, p.grants_id],
    ["ManifestMismatch", "manifest", x.manifest, p.manifest],
    ["PolicyMismatch", "exec_policy", x.policy, p.exec_policy],
    ["ReceiptMismatch", "energy.receipt", x.receipt, p.energy.receipt],
    ["ReceiptMismatch", "energy.total_uj", x.totalUj, p.energy.total_uj],
    ["JournalMismatch", "journal.root", x.journalRoot, p.journal.root],
    ["JournalMismatch", "journal.events", x.journalEvents, p.journal.events],
    ["RunHeadMismatch", "run_head", x.runHead, p.run_head ?? null],
    ["AuditPrevMismatch", "audit_prev", x.auditPrev, p.audit_prev ?? null],
  ]);
}

function check(checks: readonly Check[]): void {
  for (const [code, field, want, got] of checks)
    if (want !== undefined && want !== got)
      throw new SandboxAttestError(code, `${field}: got ${String(got)}, want ${String(want)}`);
}
