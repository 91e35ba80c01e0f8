// Demo part 1: keys, canonical form, a signed envelope verified, a tampered one refused.
import {
  addressOf,
  canonicalize,
  isWireError,
  openEnvelope,
  signPayload,
  testKey,
  type Envelope,
} from "@sbx/wire";
import { check, type DemoContext } from "./context.ts";

export default function wire(ctx: DemoContext): Promise<void> {
  ctx.title("wire: keys, canonical JSON, signed envelopes (sandbox-attest §2)");
  const steward = testKey("steward");
  ctx.say(`steward key (fixed test seed): ${steward.did}`);
  const value = { unit: "demo", budget_uj: "5000000", tags: ["b", "a"], n: 3 };
  ctx.say(`canonical form: ${canonicalize(value)}`);
  ctx.say(`content address: ${addressOf(value)}`);
  const T = "application/vnd.sandbox-attest.example+json";
  const env = signPayload(T, value, steward);
  const opened = openEnvelope(env, { payloadType: T, signers: [steward.did] });
  check(opened.address === addressOf(value), "envelope address is the payload's address");
  ctx.say(`DSSE envelope verified; signed by ${opened.signers[0] ?? "?"}`);
  const payload = Buffer.from(env.payload, "base64").toString().replace('"n":3', '"n":4');
  const tampered: Envelope = { ...env, payload: Buffer.from(payload).toString("base64") };
  try {
    openEnvelope(tampered, { payloadType: T, signers: [steward.did] });
    check(false, "tampered envelope must be refused");
  } catch (e) {
    check(isWireError(e, "BadSignature"), "tampered envelope refused with BadSignature");
    ctx.say(`tampered envelope (n: 3 → 4) refused: ${e.code}`);
  }
  return Promise.resolve();
}
