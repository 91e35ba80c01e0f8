// Deterministic grants for the C11–C19 vectors: fixed test keys, fixed times, nonces derived from
// labels, and raw signing that bypasses attenuation so that broken children can be stated.
import {
  blake3,
  canonicalize,
  signPayload,
  toHex,
  utf8,
  type Envelope,
  type Json,
  type JsonObject,
  type KeyPair,
} from "@sbx/wire";
import { GRANT_PAYLOAD_TYPE } from "@sbx/jcp-grant/grant";
import { key } from "../../generate/keys.ts";
import { jcpOracle } from "../../oracle/jcp.ts";

/** The vectors' "now": 2026-01-01T00:00:00Z; grants run from T0 − 1 h to T0 + 24 h. */
export const T0 = 1_767_225_600_000;
export const HOUR = 3_600_000;
export const ROOT = key("root-issuer");
export const ALICE = key("alice");
export const BOB = key("bob");
export const CAROL = key("carol");
export const DAVE = key("dave");
export const MALLORY = key("mallory");
export const HOST = key("host");

/** nonce derives a grant's nonce from a label: the first 16 bytes of BLAKE3(label), in hex. */
export function nonce(label: string): string {
  return toHex(blake3(utf8(`jcp-vector-nonce:${label}`))).slice(0, 32);
}

/** The root grant of most vectors: root-issuer → alice, two subtrees, 5 J, 100 calls, depth 4. */
export function rootPayload(over: JsonObject = {}): JsonObject {
  return {
    issuer: ROOT.did,
    holder: ALICE.did,
    parent: null,
    scope: { resources: ["/fs/work/**", "/net/api.example.com/**"], actions: ["read", "write"] },
    budget: { uj: "5000000", calls: 100 },
    nbf_ms: T0 - HOUR,
    exp_ms: T0 + 24 * HOUR,
    depth: 4,
    nonce: nonce("root"),
    ...over,
  };
}

/** rootExpZero is a root that states exp_ms 0 and leaves nbf_ms out: it opens (jcp §4.1 form item 7), chain verification refuses its empty window (§4.4). */
export function rootExpZero(): JsonObject {
  return Object.fromEntries(Object.entries(rootPayload({ exp_ms: 0 })).filter(([k]) => k !== "nbf_ms"));
}

/** sign signs any payload as a grant, valid or not (the generator states what must happen). */
export function sign(payload: Json, by: KeyPair): Envelope {
  return signPayload(GRANT_PAYLOAD_TYPE, payload, by);
}

/** addr is a grant envelope's address, computed from its payload bytes. */
export function addr(env: Envelope): `blake3:${string}` {
  return `blake3:${toHex(blake3(Buffer.from(env.payload, "base64")))}`;
}

/** child returns a child payload of `parent` issued by `by` to `to`, with `fields` stated. */
export function childPayload(
  parent: Envelope,
  by: KeyPair,
  to: KeyPair,
  label: string,
  fields: JsonObject = {},
): JsonObject {
  return {
    issuer: by.did,
    holder: to.did,
    parent: addr(parent),
    exp_ms: T0 + 24 * HOUR,
    nonce: nonce(label),
    ...fields,
  };
}

/** The standard valid chain: root → bob (fs/work/src, 2 J) → carol (read only, 1 J). */
export function standardChain(): Envelope[] {
  const r = sign(rootPayload(), ROOT);
  const b = sign(
    childPayload(r, ALICE, BOB, "bob", {
      scope: { resources: ["/fs/work/src/**"] },
      budget: { uj: "2000000" },
    }),
    ALICE,
  );
  const c = sign(
    childPayload(b, BOB, CAROL, "carol", {
      scope: { actions: ["read"] },
      budget: { uj: "1000000" },
      exp_ms: T0 + 12 * HOUR,
    }),
    BOB,
  );
  return [r, b, c];
}

/** verifyInput is the input of chain.verify. */
export function verifyInput(chain: readonly Envelope[], at_ms = T0, extra: JsonObject = {}): JsonObject {
  return { chain: chain as unknown as Json[], roots: [ROOT.did], at_ms, ...extra };
}

/**
 * expected computes the output of a valid chain.verify case with the independent oracle
 * (oracle/jcp.ts), never with the implementation under test; a chain the oracle refuses is a
 * broken generator.
 */
export function expected(chain: readonly Envelope[], at_ms = T0): Json {
  return oracleOutput("chain.verify", verifyInput(chain, at_ms));
}

/** oracleOutput is the oracle's output for a case that must succeed; throws when it refuses. */
export function oracleOutput(op: string, input: Json): Json {
  const r = jcpOracle(op, input);
  if (r === undefined) throw new Error(`the JCP oracle has no op ${op}`);
  if (!r.ok) throw new Error(`the JCP oracle refuses a case stated valid (${op}): ${r.error}`);
  return r.output;
}

/** env writes an envelope as vector JSON. */
export function j(env: Envelope): Json {
  return JSON.parse(canonicalize(env)) as Json;
}
