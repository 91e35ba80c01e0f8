// §4.2 Resource patterns: "/"-separated segments, `*` for exactly one segment, a trailing `/**` for
// a subtree (the path itself and everything below it). Containment is decided segment by segment,
// never on string prefixes, so `/a` covers neither `/ab` nor `/a/b`.
import { JcpError } from "../errors.ts";
import { MAX_PATTERN_BYTES, MAX_SEGMENTS } from "./limits.ts";

/** A parsed resource pattern: its segments (literal or `*`) and whether it ends in `/**`. */
export interface Pattern {
  readonly segments: readonly string[];
  readonly subtree: boolean;
}

// pchar of RFC 3986 without "%" (no percent-encoding, so no two spellings of one path) and "*".
const SEGMENT_RE = /^[A-Za-z0-9._~:@!$&'()+,;=-]+$/;

function badPattern(p: string, why: string): JcpError {
  return new JcpError("BadPattern", `${JSON.stringify(p.slice(0, 80))}: ${why}`);
}

/**
 * parsePattern reads a resource pattern (§4.2). Refuses (`BadPattern`) anything longer than 256
 * bytes or 32 segments, a missing leading "/", empty, "." or ".." segments, `**` anywhere but last,
 * and characters outside RFC 3986 pchar (no "%", no "*" inside a segment).
 */
export function parsePattern(p: string): Pattern {
  if (p.length > MAX_PATTERN_BYTES) throw badPattern(p, `longer than ${MAX_PATTERN_BYTES} bytes`);
  if (!p.startsWith("/")) throw badPattern(p, "does not start with /");
  const parts = p.slice(1).split("/");
  if (parts.length > MAX_SEGMENTS) throw badPattern(p, `more than ${MAX_SEGMENTS} segments`);
  const subtree = parts[parts.length - 1] === "**";
  const segments = subtree ? parts.slice(0, -1) : parts;
  if (!subtree && segments.length === 1 && segments[0] === "")
    throw badPattern(p, "the bare root names nothing; use /**");
  for (const s of segments) {
    if (s === "*") continue;
    if (s === "" || s === "." || s === "..")
      throw badPattern(p, `segment ${JSON.stringify(s)} is not allowed`);
    if (!SEGMENT_RE.test(s))
      throw badPattern(p, `segment ${JSON.stringify(s.slice(0, 40))} has a character outside pchar`);
  }
  return { segments, subtree };
}

/** segmentCovers: a `*` covers any one segment (itself included); a literal covers only itself. */
function segmentCovers(parent: string, child: string): boolean {
  return parent === "*" || parent === child;
}

/**
 * patternCovers reports whether every resource `child` matches is matched by `parent` (§4.2).
 * Without `/**` the parent covers only children of the same length, segment by segment; with it,
 * children at least as long as its prefix whose leading segments it covers.
 */
export function patternCovers(parent: Pattern, child: Pattern): boolean {
  const k = parent.segments.length;
  if (parent.subtree ? child.segments.length < k : child.subtree || child.segments.length !== k) return false;
  for (let i = 0; i < k; i++) if (!segmentCovers(parent.segments[i]!, child.segments[i]!)) return false;
  return true;
}

/** patternMatches reports whether a pattern matches one concrete resource path (§4.2). */
export function patternMatches(pattern: Pattern, resource: string): boolean {
  const r = parsePattern(resource);
  if (r.subtree || r.segments.includes("*")) throw badPattern(resource, "a resource has no wildcards");
  return patternCovers(pattern, r);
}
