// §2.9 Error codes of the wire layer, and the coded error every package's error class derives from.
// Tests assert the code, never the message.
import type { JsonObject } from "./json.ts";

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

/**
 * Structured facts an error carries beside its code and message (for example the offending members
 * of a §14 refusal): JSON values only, so the error crosses a process boundary whole.
 */
export type ErrorDetail = JsonObject;

/** An error as it crosses a process boundary (a socket, a pipe, an HTTP body): `{code, message, detail}`. */
export interface ErrorJson {
  readonly code: string;
  /** What the error says, without its code. */
  readonly message: string;
  readonly detail: ErrorDetail;
}

/**
 * CodedError is the base of every package's error class: a stable `code` (the spec's name for the
 * failure), the human `reason`, structured `detail`, and an optional cause. Its `message` is
 * `${code}: ${reason}`, as a Node system error's message leads with its errno code; code that needs
 * the parts reads `code` and `reason`, never the message's text.
 */
export class CodedError<C extends string = string> extends Error {
  override readonly name: string = "CodedError";
  readonly code: C;
  /** The message without its code. */
  readonly reason: string;
  readonly detail: ErrorDetail;

  constructor(code: C, reason: string, options?: { cause?: unknown; detail?: ErrorDetail }) {
    super(`${code}: ${reason}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.reason = reason;
    this.detail = options?.detail ?? {};
  }
}

/** isCodedError reports whether `e` is a CodedError of any package, optionally with the given code. */
export function isCodedError(e: unknown, code?: string): e is CodedError {
  return e instanceof CodedError && (code === undefined || e.code === code);
}

/** errorToJson is the `{code, message, detail}` form of `e` that crosses a process boundary (§2.9). */
export function errorToJson(e: CodedError): ErrorJson {
  return { code: e.code, message: e.reason, detail: e.detail };
}

/** A code as the specs name failures: an upper-case letter, then letters and digits. */
const CODE = /^[A-Z][A-Za-z0-9]{0,63}$/;
const MEMBERS = ["code", "detail", "message"];

/**
 * errorFromJson rebuilds a CodedError from its `{code, message, detail}` form (errorToJson), with
 * the same code, reason and detail. The class of the side that threw does not cross: test the
 * code (isCodedError). TypeError when `v` is not exactly that form: another member, a code that is
 * not a code name, a message that is not a string, a detail that is not a plain object.
 */
export function errorFromJson(v: unknown): CodedError {
  if (!isPlainObject(v)) throw new TypeError("errorFromJson: not an object");
  const keys = Object.keys(v).sort();
  if (keys.join() !== MEMBERS.join())
    throw new TypeError(`errorFromJson: members ${keys.join(", ")}, want ${MEMBERS.join(", ")}`);
  const { code, message, detail } = v;
  if (typeof code !== "string" || !CODE.test(code))
    throw new TypeError("errorFromJson: code is not a code name");
  if (typeof message !== "string") throw new TypeError("errorFromJson: message is not a string");
  if (!isPlainObject(detail)) throw new TypeError("errorFromJson: detail is not an object");
  return new CodedError(code, message, { detail: detail as ErrorDetail });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** The wire layer's one error class: a stable `code` plus a human message and optional cause. */
export class WireError extends CodedError<WireErrorCode> {
  override readonly name = "WireError";
}

/** isWireError reports whether `e` is a WireError, optionally with the given code. */
export function isWireError(e: unknown, code?: WireErrorCode): e is WireError {
  return e instanceof WireError && (code === undefined || e.code === code);
}
