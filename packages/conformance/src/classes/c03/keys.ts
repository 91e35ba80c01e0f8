// C3: bindings the verifier gives that differ, and signatures by the wrong key.
import { signPayload, utf8, type Json, type JsonObject } from "@sbx/wire";
import { errCase } from "../../generate/build.ts";
import { key } from "../../generate/keys.ts";
import type { Vector } from "../../types.ts";
import {
  C,
  attest,
  bindings,
  d,
  flip,
  host,
  predicate,
  signJson,
  signRaw,
  statement,
  unit,
  verifyInput,
} from "./fixture.ts";

/** Bindings the verifier supplies that differ from what was attested (§7.5), one per field. */
export function bindingVectors(): Vector[] {
  const env = attest(predicate(), host);
  const wrong: [string, Json, string][] = [
    ["host", key("host-2").did, "HostMismatch"],
    ["unit_id", d("other-unit"), "UnitMismatch"],
    ["unit", { ...(unit as unknown as JsonObject), labels: { task: "other" } }, "UnitMismatch"],
    ["grants_id", d("other-grants"), "GrantsMismatch"],
    ["manifest", d("other-manifest"), "ManifestMismatch"],
    ["exec_policy", d("other-policy"), "PolicyMismatch"],
    ["receipt", d("other-receipt"), "ReceiptMismatch"],
    ["total_uj", "2750001", "ReceiptMismatch"],
    ["journal_root", d("other-journal"), "JournalMismatch"],
    ["journal_events", 13, "JournalMismatch"],
    ["run_head", d("other-head"), "RunHeadMismatch"],
    ["run_head", null, "RunHeadMismatch"],
    ["audit_prev", d("other-prev"), "AuditPrevMismatch"],
    ["audit_prev", null, "AuditPrevMismatch"],
  ];
  return wrong.map(([k, v, code], n) =>
    errCase(
      C,
      `c3-binding-${k}-${n}`,
      `verifier expects a different ${k}`,
      "attestation.verify",
      verifyInput(env, { ...bindings(), [k]: v }),
      code,
    ),
  );
}

/** Signatures by the wrong key, relabelled, other payload types, non-canonical payloads (§7.3, §7.4). */
export function keyVectors(): Vector[] {
  const mallory = key("mallory");
  const env = attest(predicate(), host);
  const byMallory = signJson(statement(), mallory);
  const malloryHost = attest(predicate(), mallory);
  const sig = env.signatures[0]!;
  const loose = utf8(JSON.stringify(statement(), null, 1));
  return [
    errCase(
      C,
      "c3-key-other-signer",
      "host's statement signed by another key",
      "attestation.verify",
      verifyInput(byMallory),
      "SignerNotHost",
    ),
    errCase(
      C,
      "c3-key-other-host",
      "another host's attestation where this host is expected",
      "attestation.verify",
      verifyInput(malloryHost),
      "HostMismatch",
    ),
    errCase(
      C,
      "c3-key-relabelled",
      "host's signature relabelled as mallory's",
      "attestation.verify",
      verifyInput({ ...env, signatures: [{ keyid: mallory.did, sig: sig.sig }] }),
      "BadSignature",
    ),
    errCase(
      C,
      "c3-key-signature-bit",
      "one bit of the signature flipped",
      "attestation.verify",
      verifyInput({ ...env, signatures: [{ keyid: sig.keyid, sig: flip(sig.sig) }] }),
      "BadSignature",
    ),
    errCase(
      C,
      "c3-payload-type-json",
      "signed as application/json",
      "attestation.verify",
      verifyInput(signPayload("application/json", statement(), host)),
      "WrongPayloadType",
    ),
    errCase(
      C,
      "c3-payload-type-swapped",
      "payloadType changed after signing",
      "attestation.verify",
      verifyInput({ ...env, payloadType: "application/json" }),
      "WrongPayloadType",
    ),
    errCase(
      C,
      "c3-non-canonical",
      "validly signed payload not in JCS form",
      "attestation.verify",
      verifyInput(signRaw(loose)),
      "NotCanonical",
    ),
    errCase(
      C,
      "c3-not-an-object",
      "validly signed payload that is an array",
      "attestation.verify",
      verifyInput(signRaw(utf8("[]"))),
      "BadEnvelope",
    ),
  ];
}
