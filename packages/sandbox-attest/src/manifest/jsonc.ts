// §14.2 Reading devcontainer.json: JSONC (comments, and trailing commas by §14.2's decision) through
// jsonc-parser's tree, with every syntax error reported and the structure checked here: duplicate
// and prototype-reaching keys refused, objects built without prototypes.
import { createScanner, parseTree, printParseErrorCode, type Node, type ParseError } from "jsonc-parser";
import { FORBIDDEN_KEYS, type Json, type JsonObject } from "@sbx/wire";
import type { MemberRefusal } from "../errors.ts";
import { pathsAt } from "./locate.ts";

/** Largest devcontainer.json accepted, in bytes (§14.2). */
export const MAX_SOURCE_BYTES = 1024 * 1024;
/** Deepest nesting accepted (§14.2). */
export const MAX_DEPTH = 64;

/** An offending member; syntax errors also carry the byte offset (in UTF-16 units) they were found at. */
export interface Offending extends MemberRefusal {
  readonly offset?: number;
}

/** What reading a source yields: the value, or the syntax errors, and the structural refusals. */
export interface ReadResult {
  readonly value: JsonObject | null;
  readonly syntax: readonly Offending[];
  readonly structure: readonly Offending[];
}

/** pointerOf writes a path as an RFC 6901 JSON pointer, §14.2. */
export function pointerOf(path: readonly (string | number)[]): string {
  return path.map((p) => "/" + String(p).replaceAll("~", "~0").replaceAll("/", "~1")).join("");
}

function decode(source: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(source);
  } catch {
    return null;
  }
}

// openings counts `{` and `[` anywhere: with no more of them than MAX_DEPTH, no nesting can exceed it.
function openings(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) n++;
  }
  return n;
}

// tooDeep scans tokens without recursion, so nesting that would exhaust the parser's stack is
// refused before the parser runs.
// jsonc-parser's SyntaxKind is an ambient const enum, so its values are written out here.
const OPEN_BRACE = 1;
const CLOSE_BRACE = 2;
const OPEN_BRACKET = 3;
const CLOSE_BRACKET = 4;
const EOF = 17;

function tooDeep(text: string): boolean {
  if (openings(text) <= MAX_DEPTH) return false;
  const sc = createScanner(text, true);
  let depth = 0;
  for (let t: number = sc.scan(); t !== EOF; t = sc.scan()) {
    if (t === OPEN_BRACE || t === OPEN_BRACKET) depth++;
    else if (t === CLOSE_BRACE || t === CLOSE_BRACKET) depth--;
    if (depth > MAX_DEPTH) return true;
  }
  return false;
}

// Every error's member path from one pass over the text (./locate.ts), never one pass per error.
function syntaxErrors(text: string, errors: readonly ParseError[]): Offending[] {
  const paths = pathsAt(
    text,
    errors.map((e) => e.offset),
  );
  return errors.map((e, i) => ({
    pointer: pointerOf(paths[i] ?? []),
    code: printParseErrorCode(e.error),
    offset: e.offset,
  }));
}

/**
 * readJsonc parses devcontainer.json bytes (§14.2). Oversize input, bad UTF-8 and every syntax error
 * (missing commas, trailing text, unterminated strings, …) and nesting deeper than MAX_DEPTH land in
 * `syntax`; duplicate keys, `__proto__`/`constructor`/`prototype`, lone surrogates and a non-object
 * root land in `structure`. A leading byte-order mark is skipped. Never throws on any input.
 */
export function readJsonc(source: Uint8Array): ReadResult {
  if (source.length > MAX_SOURCE_BYTES)
    return { value: null, syntax: [{ pointer: "", code: "OversizeInput" }], structure: [] };
  const decoded = decode(source);
  if (decoded === null) return { value: null, syntax: [{ pointer: "", code: "InvalidUtf8" }], structure: [] };
  const text = decoded.startsWith("\uFEFF") ? decoded.slice(1) : decoded;
  if (tooDeep(text)) return { value: null, syntax: [{ pointer: "", code: "TooDeep" }], structure: [] };
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, {
    allowTrailingComma: true,
    disallowComments: false,
    allowEmptyContent: false,
  });
  if (errors.length > 0 || root === undefined) {
    const syntax = syntaxErrors(text, errors);
    return {
      value: null,
      syntax: syntax.length ? syntax : [{ pointer: "", code: "ValueExpected" }],
      structure: [],
    };
  }
  const structure: Offending[] = [];
  const value = build(root, [], structure);
  if (root.type !== "object") structure.push({ pointer: "", code: "NotAnObject" });
  return { value: root.type === "object" ? (value as JsonObject) : null, syntax: [], structure };
}

function build(node: Node, path: (string | number)[], out: Offending[]): Json {
  if (path.length > MAX_DEPTH) {
    out.push({ pointer: pointerOf(path), code: "TooDeep" });
    return null;
  }
  if (node.type === "object") return buildObject(node, path, out);
  if (node.type === "array") return (node.children ?? []).map((c, i) => build(c, [...path, i], out));
  if (node.type === "string") {
    const s = node.value as string;
    if (!s.isWellFormed()) out.push({ pointer: pointerOf(path), code: "LoneSurrogate" });
    return s;
  }
  return node.value as Json;
}

function buildObject(node: Node, path: (string | number)[], out: Offending[]): JsonObject {
  const obj = Object.create(null) as JsonObject;
  for (const prop of node.children ?? []) {
    const [k, v] = prop.children ?? [];
    if (k === undefined || v === undefined) continue;
    const key = k.value as string;
    const here = [...path, key];
    if (!key.isWellFormed()) out.push({ pointer: pointerOf(here), code: "LoneSurrogate" });
    if (FORBIDDEN_KEYS.has(key)) out.push({ pointer: pointerOf(here), code: "ForbiddenKey" });
    else if (Object.hasOwn(obj, key)) out.push({ pointer: pointerOf(here), code: "DuplicateKey" });
    const value = build(v, here, out);
    if (!FORBIDDEN_KEYS.has(key) && !Object.hasOwn(obj, key)) obj[key] = value;
  }
  return obj;
}
