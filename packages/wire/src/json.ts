// §2.1 Canonical JSON: RFC 8785 (JCS) serialisation through the `canonicalize` library, and the
// strict parse side written here, which refuses what a signed payload must never contain.
import canonicalizeLib from "canonicalize";
import { WireError } from "./errors.ts";
import { fromUtf8, utf8, bytesEqual } from "./bytes.ts";

/** A JSON value as the wire carries it. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
/** A JSON object (built with a null prototype by the strict parser). */
export interface JsonObject {
  [key: string]: Json;
}

/** Keys that could reach an object's prototype chain in some consumer; refused everywhere (§2.1). */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** Limits applied by the strict parser before and during any work. */
export interface ParseLimits {
  /** Largest input in bytes (default 16 MiB). */
  readonly maxBytes?: number;
  /** Deepest nesting of arrays and objects (default 64). */
  readonly maxDepth?: number;
  /** "integers" (default: protocol numbers are safe integers) or "doubles" (any finite number). */
  readonly numbers?: NumberMode;
}

const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
const DEFAULT_MAX_DEPTH = 64;

/** Which numbers a value may hold: safe integers only (the protocol's rule), or any finite double. */
export type NumberMode = "integers" | "doubles";

/** checkValue walks a value the caller built and refuses what canonical JSON cannot carry. */
function checkValue(v: unknown, depth: number, mode: NumberMode): void {
  if (depth > DEFAULT_MAX_DEPTH) throw new WireError("TooDeep", `nesting deeper than ${DEFAULT_MAX_DEPTH}`);
  if (v === null || typeof v === "boolean") return;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new WireError("UnsafeNumber", `non-finite number ${v}`);
    if (mode === "integers" && !Number.isSafeInteger(v))
      throw new WireError("UnsafeNumber", `${v} is not an integer in the I-JSON safe range`);
    return;
  }
  if (typeof v === "string") {
    if (!v.isWellFormed()) throw new WireError("LoneSurrogate", "string holds a lone surrogate");
    return;
  }
  if (Array.isArray(v)) {
    for (const x of v) checkValue(x, depth + 1, mode);
    return;
  }
  if (typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      if (!k.isWellFormed()) throw new WireError("LoneSurrogate", "key holds a lone surrogate");
      if (FORBIDDEN_KEYS.has(k)) throw new WireError("ForbiddenKey", `key ${JSON.stringify(k)} is refused`);
      if (x === undefined) throw new TypeError(`canonicalize: member ${JSON.stringify(k)} is undefined`);
      checkValue(x, depth + 1, mode);
    }
    return;
  }
  throw new TypeError(`canonicalize: ${typeof v} is not JSON`);
}

/**
 * canonicalize returns the RFC 8785 canonical text of `value` (§2.1).
 * Protocol objects hold safe integers only; `numbers: "doubles"` admits any finite number (RFC 8785
 * test data). Throws WireError `LoneSurrogate`, `UnsafeNumber`, `ForbiddenKey` or `TooDeep`;
 * TypeError for a value with no JSON form.
 */
export function canonicalize(value: unknown, numbers: NumberMode = "integers"): string {
  checkValue(value, 0, numbers);
  const s = canonicalizeLib(value);
  if (s === undefined) throw new TypeError("canonicalize: value has no JSON form");
  return s;
}

/** canonicalBytes returns the UTF-8 bytes of the canonical text of `value` (§2.1). */
export function canonicalBytes(value: unknown): Uint8Array {
  return utf8(canonicalize(value));
}

/**
 * parseStrict parses JSON text or UTF-8 bytes (§2.1), refusing duplicate keys (`DuplicateKey`),
 * `__proto__`/`constructor`/`prototype` keys (`ForbiddenKey`), lone surrogates (`LoneSurrogate`),
 * numbers outside the I-JSON safe range or fractional ones unless allowed (`UnsafeNumber`),
 * oversize input (`OversizeInput`), deep nesting (`TooDeep`), bad UTF-8 (`InvalidUtf8`) and any
 * syntax error (`InvalidJson`). Objects are built with a null prototype.
 */
export function parseStrict(input: string | Uint8Array, limits: ParseLimits = {}): Json {
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
  let text: string;
  if (typeof input === "string") {
    if (input.length > maxBytes) throw new WireError("OversizeInput", `input longer than ${maxBytes}`);
    text = input;
  } else {
    if (input.length > maxBytes)
      throw new WireError("OversizeInput", `input of ${input.length} bytes exceeds ${maxBytes}`);
    try {
      text = fromUtf8(input);
    } catch (cause) {
      throw new WireError("InvalidUtf8", "input is not UTF-8", { cause });
    }
  }
  return new Parser(text, limits.maxDepth ?? DEFAULT_MAX_DEPTH, limits.numbers ?? "integers").document();
}

/**
 * parseCanonical parses bytes that must already be in canonical form (§2.1): the strict parse, then
 * re-canonicalisation compared byte for byte. Throws `NotCanonical` when they differ.
 */
export function parseCanonical(bytes: Uint8Array, limits: ParseLimits = {}): Json {
  const value = parseStrict(bytes, limits);
  if (!bytesEqual(utf8(canonicalize(value, limits.numbers)), bytes))
    throw new WireError("NotCanonical", "bytes are not in RFC 8785 form");
  return value;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** A recursive-descent parser over RFC 8259 JSON text. */
class Parser {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly maxDepth: number,
    private readonly numbers: NumberMode,
  ) {}

  document(): Json {
    this.ws();
    const v = this.value(0);
    this.ws();
    if (this.i !== this.s.length) this.fail("trailing text");
    return v;
  }

  private fail(what: string): never {
    throw new WireError("InvalidJson", `${what} at offset ${this.i}`);
  }

  private ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else break;
    }
  }

  private value(depth: number): Json {
    const c = this.s[this.i];
    if (c === "{") return this.object(depth + 1);
    if (c === "[") return this.array(depth + 1);
    if (c === '"') return this.string();
    if (c === "t") return this.literal("true", true);
    if (c === "f") return this.literal("false", false);
    if (c === "n") return this.literal("null", null);
    return this.number();
  }

  private literal<T extends Json>(word: string, v: T): T {
    if (!this.s.startsWith(word, this.i)) this.fail("unexpected token");
    this.i += word.length;
    return v;
  }

  private number(): number {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) this.fail("unexpected token");
    this.i += m[0].length;
    const n = Number(m[0]);
    if (!Number.isFinite(n)) throw new WireError("UnsafeNumber", `number ${m[0]} overflows`);
    if (this.numbers === "integers" && !Number.isSafeInteger(n))
      throw new WireError("UnsafeNumber", `${m[0]} is not an integer in the I-JSON safe range`);
    return n;
  }

  private string(): string {
    const s = this.s;
    this.i++; // opening quote
    let out = "";
    let start = this.i;
    for (;;) {
      if (this.i >= s.length) this.fail("unterminated string");
      const c = s.charCodeAt(this.i);
      if (c === 0x22) break;
      if (c < 0x20) this.fail("control character in string");
      if (c === 0x5c) {
        out += s.slice(start, this.i);
        out += this.escape();
        start = this.i;
      } else this.i++;
    }
    out += s.slice(start, this.i);
    this.i++; // closing quote
    if (!out.isWellFormed()) throw new WireError("LoneSurrogate", "string holds a lone surrogate");
    return out;
  }

  private escape(): string {
    const e = this.s[this.i + 1];
    this.i += 2;
    switch (e) {
      case '"':
        return '"';
      case "\\":
        return "\\";
      case "/":
        return "/";
      case "b":
        return "\b";
      case "f":
        return "\f";
      case "n":
        return "\n";
      case "r":
        return "\r";
      case "t":
        return "\t";
      case "u": {
        const h = this.s.slice(this.i, this.i + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(h)) this.fail("bad \\u escape");
        this.i += 4;
        return String.fromCharCode(parseInt(h, 16));
      }
      default:
        this.i -= 2;
        return this.fail("bad escape");
    }
  }

  private array(depth: number): Json[] {
    if (depth > this.maxDepth) throw new WireError("TooDeep", `nesting deeper than ${this.maxDepth}`);
    this.i++;
    const out: Json[] = [];
    this.ws();
    if (this.s[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value(depth));
      this.ws();
      const c = this.s[this.i++];
      if (c === "]") return out;
      if (c !== ",") this.fail("expected , or ]");
    }
  }

  private object(depth: number): JsonObject {
    if (depth > this.maxDepth) throw new WireError("TooDeep", `nesting deeper than ${this.maxDepth}`);
    this.i++;
    const out = Object.create(null) as JsonObject;
    this.ws();
    if (this.s[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail("expected a member name");
      const key = this.string();
      if (FORBIDDEN_KEYS.has(key))
        throw new WireError("ForbiddenKey", `key ${JSON.stringify(key)} is refused`);
      if (Object.hasOwn(out, key))
        throw new WireError("DuplicateKey", `duplicate key ${JSON.stringify(key)}`);
      this.ws();
      if (this.s[this.i++] !== ":") this.fail("expected :");
      this.ws();
      out[key] = this.value(depth);
      this.ws();
      const c = this.s[this.i++];
      if (c === "}") return out;
      if (c !== ",") this.fail("expected , or }");
    }
  }
}
