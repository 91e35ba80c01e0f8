// §2.9 Error codes of the wire layer. Tests assert the code, never the message.

/** Codes a wire-layer refusal carries (sandbox-attest §2.9). */
export type WireErrorCode =
  | "InvalidJson"
  | "InvalidUtf8"
  | "DuplicateKey"
  | "ForbiddenKey"
  | "LoneSurrogate"
  | "UnsafeNumber"
  | "TooDeep"
  | "OversizeInput"
  | "NotCanonical"
  | "BadDigest"
  | "BadEnvelope"
  | "WrongPayloadType"
  | "BadSignature"
  | "NonCanonicalKey"
  | "SmallOrderKey"
  | "NonCanonicalR"
  | "SmallOrderR"
  | "NonCanonicalS"
  | "UnknownSigner"
  | "BadKey"
  | "BadDidKey"
  | "BadAmount"
  | "AmountOverflow"
  | "AmountUnderflow";

/** The wire layer's one error class: a stable `code` plus a human message and optional cause. */
export class WireError extends Error {
  override readonly name = "WireError";
  readonly code: WireErrorCode;

  constructor(code: WireErrorCode, message: string, options?: { cause?: unknown }) {
    super(`${code}: ${message}`, options);
    this.code = code;
  }
}

/** isWireError reports whether `e` is a WireError, optionally with the given code. */
export function isWireError(e: unknown, code?: WireErrorCode): e is WireError {
  return e instanceof WireError && (code === undefined || e.code === code);
}
