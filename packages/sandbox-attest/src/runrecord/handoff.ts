// §13.2a Hand-off: a parked run's record in the store it leaves ends in a `moved` segment, signed by
// the host that hands it off, naming where it went and the head it handed off.
import {
  canonicalBytes,
  fromBase64,
  pae,
  publicKeyFromDidKey,
  signBytes,
  toBase64,
  verifyEd25519,
  type Digest,
  type KeyPair,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import type { MovedSegment } from "./segment.ts";

/** The DSSE payload type under whose PAE a hand-off is signed (§13.2a). */
export const MOVED_PAYLOAD_TYPE = "application/vnd.sandbox.runrecord.moved+json";

/** movedMessage returns the bytes a hand-off's `sig` signs: PAE(type, JCS(segment without `sig`)). */
export function movedMessage(seg: Omit<MovedSegment, "sig">): Uint8Array {
  const { kind, at_ms, head, to, signer } = seg;
  return pae(MOVED_PAYLOAD_TYPE, canonicalBytes({ kind, at_ms, head, to, signer }));
}

/** signHandoff builds the `moved` segment handing off the run at `head` to `to`, signed by `key`. */
export function signHandoff(key: KeyPair, head: Digest, to: string, atMs: number): MovedSegment {
  const unsigned = { kind: "moved" as const, at_ms: atMs, head, to, signer: key.did };
  return { ...unsigned, sig: toBase64(signBytes(key, movedMessage(unsigned))) };
}

/**
 * checkHandoff refuses a hand-off (§13.2a, `BadHandoff`) whose `head` is not `current`, the head of
 * the record it follows, or whose `sig` does not verify under `signer`.
 */
export function checkHandoff(seg: MovedSegment, current: Digest): void {
  if (seg.head !== current)
    throw new SandboxAttestError("BadHandoff", `hand-off names head ${seg.head}, the record's is ${current}`);
  const sig = fromBase64(seg.sig);
  if (sig === null || !verifyEd25519(publicKeyFromDidKey(seg.signer), movedMessage(seg), sig))
    throw new SandboxAttestError("BadHandoff", `hand-off signature by ${seg.signer} does not verify`);
}
