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
  /** Deepest nesting of arrays and objects (default 64); any number ≥ 0, none overflows the stack. */
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
 * in integer mode (the default) a number whose text has a fraction or an exponent or writes an
 * integer outside the I-JSON safe range, in doubles mode one that overflows (`UnsafeNumber`),
 * oversize input (`OversizeInput`), nesting deeper than `maxDepth` (`TooDeep`, whatever the
 * limit: the parser does not recurse), bad UTF-8 (`InvalidUtf8`) and any syntax error
 * (`InvalidJson`). Objects are built with a null prototype. RangeError for a negative or NaN
 * `maxDepth`.
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
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!(maxDepth >= 0)) throw new RangeError("parseStrict: limits.maxDepth must be a number ≥ 0");
  return new Parser(text, maxDepth, limits.numbers ?? "integers").document();
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

// RFC 8259 §6 number syntax; group 1 is the fraction and group 2 the exponent.
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

/** An array or object still open while the parser reads its members. */
type Open = { readonly arr: Json[] } | { readonly obj: JsonObject; key: string };

/**
 * A parser over RFC 8259 JSON text. It keeps open arrays and objects on a list of its own, not on
 * the call stack, so no depth limit a caller sets can overflow the stack: deep input is `TooDeep`.
 */
class Parser {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly maxDepth: number,
    private readonly numbers: NumberMode,
  ) {}

  document(): Json {
    this.ws();
    const v = this.value();
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

  /** value reads one value, nested to any depth up to maxDepth, without recursion. */
  private value(): Json {
    const open: Open[] = [];
    for (;;) {
      let v = this.scalarOrOpen(open);
      if (v === undefined) continue; // a container was opened: read its first member
      for (;;) {
        const top = open[open.length - 1];
        if (!top) return v;
        if ("arr" in top) top.arr.push(v);
        else top.obj[top.key] = v;
        if (this.next(top)) break;
        open.pop();
        v = "arr" in top ? top.arr : top.obj;
      }
    }
  }

  /**
   * scalarOrOpen reads a scalar, or an empty array or object; or opens a non-empty one, pushing it
   * on `open` and returning undefined.
   */
  private scalarOrOpen(open: Open[]): Json | undefined {
    const c = this.s[this.i];
    if (c !== "[" && c !== "{") return this.scalar(c);
    if (open.length + 1 > this.maxDepth)
      throw new WireError("TooDeep", `nesting deeper than ${this.maxDepth}`);
    this.i++;
    this.ws();
    if (c === "[") {
      if (this.s[this.i] !== "]") return void open.push({ arr: [] });
      this.i++;
      return [];
    }
    const obj = Object.create(null) as JsonObject;
    if (this.s[this.i] !== "}") return void open.push({ obj, key: this.memberName(obj) });
    this.i++;
    return obj;
  }

  /**
   * next reads what follows a member of `top`: a comma (then the next member name, for an object)
   * and returns true; or the closing bracket and returns false.
   */
  private next(top: Open): boolean {
    this.ws();
    const c = this.s[this.i++];
    const close = "arr" in top ? "]" : "}";
    if (c === close) return false;
    if (c !== ",") this.fail(`expected , or ${close}`);
    this.ws();
    if (!("arr" in top)) top.key = this.memberName(top.obj);
    return true;
  }

  /** memberName reads `"name" :`, refusing forbidden and duplicate names, and the space after. */
  private memberName(obj: JsonObject): string {
    if (this.s[this.i] !== '"') this.fail("expected a member name");
    const key = this.string();
    if (FORBIDDEN_KEYS.has(key)) throw new WireError("ForbiddenKey", `key ${JSON.stringify(key)} is refused`);
    if (Object.hasOwn(obj, key)) throw new WireError("DuplicateKey", `duplicate key ${JSON.stringify(key)}`);
    this.ws();
    if (this.s[this.i++] !== ":") this.fail("expected :");
    this.ws();
    return key;
  }

  private scalar(c: string | undefined): Json {
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

  /**
   * number reads a number token. In integer mode it is judged by its text, never by a rounded
   * value: a fraction or an exponent is refused whatever it evaluates to (`1.0`, `1e0`, `1e-400`),
   * and the integer it writes must lie in −(2⁵³−1) … 2⁵³−1 (`UnsafeNumber`); `-0` reads as 0.
   */
  private number(): number {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) this.fail("unexpected token");
    const text = m[0];
    this.i += text.length;
    if (this.numbers === "integers") {
      if (m[1] !== undefined || m[2] !== undefined)
        throw new WireError("UnsafeNumber", `${text.slice(0, 40)} is not an integer by its text`);
      const n = text.length <= 17 ? Number(text) : Infinity;
      if (!Number.isSafeInteger(n))
        throw new WireError("UnsafeNumber", `${text.slice(0, 40)} is outside the I-JSON safe range`);
      return n === 0 ? 0 : n;
    }
    const n = Number(text);
    if (!Number.isFinite(n)) throw new WireError("UnsafeNumber", `number ${text.slice(0, 40)} overflows`);
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
}
