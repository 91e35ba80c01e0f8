// @sbx/wire: the conventions of sandbox-attest §2, shared by every other package.
export { CodedError, isCodedError, errorToJson, errorFromJson, WireError, isWireError } from "./errors.ts";
export type { ErrorDetail, ErrorJson, WireErrorCode } from "./errors.ts";
export {
  toHex,
  fromHex,
  utf8,
  fromUtf8,
  toBase64,
  fromBase64,
  concatBytes,
  bytesEqual,
  compareBytes,
} from "./bytes.ts";
export { canonicalize, canonicalBytes, parseStrict, parseCanonical, FORBIDDEN_KEYS } from "./json.ts";
export type { Json, JsonObject, ParseLimits, NumberMode } from "./json.ts";
export { blake3, createBlake3, createBlake3Chunk, blake3Backend, SMALL_INPUT_MAX } from "./blake3.ts";
export type { Blake3Hasher, Blake3Chunk } from "./blake3.ts";
export { isDigest, parseDigest, formatDigest, digestBytes, addressOf } from "./digest.ts";
export type { Digest } from "./digest.ts";
export {
  ed25519,
  nobleBackend,
  verifyEd25519,
  ed25519Refusal,
  isCanonicalS,
  useEd25519Backend,
} from "./ed25519.ts";
export type { Ed25519Backend, Ed25519Refusal } from "./ed25519.ts";
export {
  publicKeyRefusal,
  isCanonicalPoint,
  isSmallOrderEncoding,
  SMALL_ORDER_ENCODINGS,
} from "./edpoint.ts";
export type { KeyRefusal } from "./edpoint.ts";
export {
  didKeyFromPublicKey,
  publicKeyFromDidKey,
  isDidKey,
  base58btcEncode,
  base58btcDecode,
} from "./didkey.ts";
export { keyPairFromSeed, generateKeyPair, testKey, signBytes, TEST_KEY_TAG } from "./keys.ts";
export type { KeyPair } from "./keys.ts";
export {
  pae,
  signPayload,
  openEnvelope,
  envelopeAddress,
  samePayload,
  payloadOf,
  assertEnvelopeShape,
} from "./dsse.ts";
export type { Envelope, Signature, Opened, OpenOptions } from "./dsse.ts";
export { chainGenesis, chainNext, chainNextBytes, chainHeads } from "./chain.ts";
export {
  AMOUNT_MAX,
  isAmount,
  parseAmount,
  formatAmount,
  addAmounts,
  subAmounts,
  compareAmounts,
} from "./amount.ts";
export type { Amount } from "./amount.ts";
