// Output oracles for valid cases of C2, C5 and C6 (sandbox-attest §6.4, §7.7, §13): chain heads
// recomputed from §2.7 over the payloads, sums and the provenance of a sum (§6.2 item 4) taken
// literally, and a run record's phase walked segment by segment (§13.3), a hand-off's signature checked as
// §13.2a states it. Like durable.ts they say
// what a valid case must output and do not restate refusals. Nothing is imported from
// @sbx/sandbox-attest.
import {
  addressOf,
  canonicalBytes,
  canonicalize,
  pae,
  publicKeyFromDidKey,
  verifyEd25519,
  chainGenesis,
  chainNext,
  fromBase64,
  type Digest,
  type Json,
  type JsonObject,
} from "@sbx/wire";

function payloadOf(env: unknown): JsonObject {
  const b = fromBase64((env as { payload: string }).payload);
  if (b === null) throw new Error("oracle: a valid case holds a payload that is not base64");
  return JSON.parse(Buffer.from(b).toString("utf8")) as JsonObject;
}

const sum = (xs: readonly Json[]): string =>
  xs.reduce<bigint>((s, x) => s + BigInt(x as string), 0n).toString();

/** weakest is §6.2 item 4: measured only when every part is, estimated when any part is or none exists. */
function weakest(provenances: readonly Json[]): string {
  if (provenances.length === 0 || provenances.includes("estimated")) return "estimated";
  return provenances.every((p) => p === "measured") ? "measured" : "attributed";
}

/** energy.receipt.verify (§6.1): the payload's address, its total and the provenance of that sum. */
function receiptVerify(o: JsonObject): Json {
  const r = payloadOf(o.envelope);
  const components = r.components as JsonObject[];
  return {
    address: addressOf(r),
    total_uj: sum(components.map((c) => c.uj as string)),
    provenance: weakest(components.map((c) => c.provenance as string)),
  };
}

/** energy.chain.verify (§6.4): head₀ of the run's ids, then each receipt's payload; count and total. */
function energyChain(o: JsonObject): Json {
  const receipts = (o.envelopes as unknown[]).map(payloadOf);
  let head = chainGenesis("sandbox.energy/1", [o.unit_id as Digest, o.grants_id as Digest]);
  for (const r of receipts) head = chainNext(head, r);
  return { head, count: receipts.length, total_uj: sum(receipts.map((r) => r.total_uj as string)) };
}

/** audit.verify (§7.7 item 5): the last attestation's address, its position and the number verified. */
function auditVerify(o: JsonObject): Json {
  const atts = o.attestations as unknown[];
  const from = o.from as { head: Digest; seq: number } | undefined;
  const start = from ?? { head: chainGenesis("sandbox.audit/1", [o.domain as Digest]), seq: 0 };
  const last = atts[atts.length - 1];
  return {
    head: last === undefined ? start.head : addressOf(payloadOf(last)),
    seq: start.seq + atts.length,
    count: atts.length,
  };
}

/** The segments of a record's wire text (§13.5): line 1 the header, then one `{head, n, segment}` each. */
function readRecord(text: string): { header: JsonObject; segments: JsonObject[] } {
  const lines = text
    .split("\n")
    .slice(0, -1)
    .map((l) => JSON.parse(l) as JsonObject);
  return { header: lines[0]!, segments: lines.slice(1).map((l) => l.segment as JsonObject) };
}

/**
 * checkHandoff is §13.2a for a valid case: the hand-off names the head before it and its signature
 * verifies under its signer, over PAE(type, JCS of the segment without `sig`). Throws otherwise: a
 * valid vector whose hand-off is not one fails generation.
 */
function checkHandoff(s: JsonObject, before: Digest): void {
  const { sig, ...m } = s;
  const raw = fromBase64(sig as string);
  const msg = pae("application/vnd.sandbox.runrecord.moved+json", canonicalBytes(m));
  const pk = publicKeyFromDidKey(s.signer);
  if (s.head !== before || raw === null || !verifyEd25519(pk, msg, raw))
    throw new Error("oracle: a valid case holds a hand-off that does not verify");
}

/** runrecord.verify (§13.1–§13.3): every head from head₀, the phase after the last segment, idle energy. */
function recordVerify(o: JsonObject): Json {
  const { header, segments } = readRecord(o.record as string);
  const genesis = chainGenesis("sandbox.runrecord/1", [header.unit_id as Digest, header.grants_id as Digest]);
  const heads = [genesis];
  let phase = "active";
  for (const s of segments) {
    heads.push(chainNext(heads[heads.length - 1]!, s));
    if (s.kind === "suspended") phase = "parked";
    if (s.kind === "resumed") phase = "active";
    if (s.kind === "closed") phase = "closed";
    if (s.kind === "moved") {
      checkHandoff(s, heads[heads.length - 2]!);
      phase = "moved";
    }
  }
  const idle = segments.filter((s) => s.kind === "resumed").map((s) => s.idle_uj as string);
  return {
    genesis,
    head: heads[heads.length - 1]!,
    heads,
    phase,
    segments: segments.length,
    idle_uj: sum(idle),
  };
}

/** runrecord.energy (§13.6): active energy of the attestations given, idle energy by provenance. */
function recordEnergy(o: JsonObject): Json {
  const { segments } = readRecord(o.record as string);
  const known = o.active_uj as JsonObject;
  const executed = segments.filter((s) => s.kind === "executed").map((s) => s.attestation as string);
  const resumed = segments.filter((s) => s.kind === "resumed");
  const idleOf = (p: string) =>
    sum(resumed.filter((s) => s.idle_provenance === p).map((s) => s.idle_uj as string));
  const active = sum(executed.filter((a) => typeof known[a] === "string").map((a) => known[a]!));
  const idle = sum(resumed.map((s) => s.idle_uj as string));
  const unresolved = executed.filter((a) => typeof known[a] !== "string");
  return {
    active_uj: active,
    idle_uj: idle,
    total_uj: (BigInt(active) + BigInt(idle)).toString(),
    idle_by_provenance: {
      measured: idleOf("measured"),
      attributed: idleOf("attributed"),
      estimated: idleOf("estimated"),
    },
    unresolved,
    complete: unresolved.length === 0,
  };
}

/** lastHead is head_n of a record's wire text, recomputed from head₀ over every segment (§13.1). */
function lastHead(text: string): { head: Digest; n: number } {
  const { header, segments } = readRecord(text);
  let head = chainGenesis("sandbox.runrecord/1", [header.unit_id as Digest, header.grants_id as Digest]);
  for (const s of segments) head = chainNext(head, s);
  return { head, n: segments.length };
}

/** runrecord.append (§13.5): the new head, and the record with one line `{head, n, segment}` more. */
function recordAppend(o: JsonObject): Json {
  const last = lastHead(o.record as string);
  const head = chainNext(last.head, o.segment);
  const line = canonicalize({ head, n: last.n + 1, segment: o.segment as JsonObject });
  return { head, record: `${o.record as string}${line}\n` };
}

/** runrecord.resume (§13.4): the resumed segment from the snapshot offered, the time and the idle figure. */
function recordResume(o: JsonObject): Json {
  const idle = o.idle as JsonObject;
  const segment: JsonObject = {
    kind: "resumed",
    snapshot: o.offered as JsonObject,
    at_ms: o.at_ms as number,
    idle_uj: idle.uj as string,
    idle_provenance: idle.provenance as string,
    idle_source: idle.source as string,
    ...(idle.basis === undefined ? {} : { idle_basis: idle.basis }),
  };
  return { segment, head: chainNext(lastHead(o.record as string).head, segment) };
}

const OPS: Record<string, (o: JsonObject) => Json> = {
  "runrecord.append": recordAppend,
  "runrecord.resume": recordResume,
  "energy.receipt.verify": receiptVerify,
  "energy.chain.verify": energyChain,
  "audit.verify": auditVerify,
  "runrecord.verify": recordVerify,
  "runrecord.energy": recordEnergy,
};

/** recordOutputOracle computes the output a valid case of `op` must give, or undefined for another op. */
export function recordOutputOracle(op: string, input: Json): Json | undefined {
  const f = OPS[op];
  return f === undefined ? undefined : f(input as JsonObject);
}
