// C11: grant format and signatures (jcp §4.1). grant.open on valid grants and on grants broken one
// member at a time (each properly signed, so only the form is wrong), plus signature breaks.
import { addressOf, canonicalize, utf8, type Envelope, type Json, type JsonObject } from "@sbx/wire";
import { GRANT_PAYLOAD_TYPE } from "@sbx/jcp-grant/grant";
import { errCase, flipBase64Byte, okCase, signedRaw } from "../generate/build.ts";
import type { ConformanceClass, Vector } from "../types.ts";
import {
  addr,
  ALICE,
  BOB,
  childPayload,
  HOUR,
  MALLORY,
  oracleOutput,
  rootExpZero,
  rootPayload,
  ROOT,
  sign,
  standardChain,
  T0,
} from "./grants/fixtures.ts";
import { grantOpen } from "./grants/ops.ts";

const C = "C11" as const;
const open = (env: Json) => ({ envelope: env });

// The expected output comes from the independent oracle (oracle/jcp.ts), not from openGrant.
function openOk(id: string, desc: string, env: Envelope): Vector {
  const input = open(env as unknown as Json);
  return okCase(C, id, desc, "grant.open", input, oracleOutput("grant.open", input));
}

function validVectors(): Vector[] {
  const [r, b, c] = standardChain();
  return [
    openOk("c11-open-root", "a root grant opens; its address is its payload's", r!),
    openOk("c11-open-child-inherits", "a child stating only some fields opens", b!),
    openOk("c11-open-grandchild", "a grandchild opens", c!),
  ];
}

/** without returns a copy of `o` lacking member `k`. */
function without(o: JsonObject, k: string): JsonObject {
  return Object.fromEntries(Object.entries(o).filter(([x]) => x !== k));
}

// Each: a payload change that breaks the form, signed by the issuer all the same.
function formVectors(): Vector[] {
  const r = rootPayload();
  const s = r.scope as JsonObject;
  const bad: [string, JsonObject, string][] = [
    ["unknown-member", { ...r, extra: 1 }, "BadGrant"],
    ["missing-holder", without(r, "holder"), "BadGrant"],
    ["missing-exp", without(r, "exp_ms"), "BadGrant"],
    ["missing-nonce", without(r, "nonce"), "BadGrant"],
    ["holder-not-didkey", { ...r, holder: "did:web:example.com" }, "BadGrant"],
    ["parent-not-digest", { ...r, parent: "sha256:00" }, "BadGrant"],
    ["root-without-depth", without(r, "depth"), "BadGrant"],
    ["root-without-budget", without(r, "budget"), "BadGrant"],
    ["root-without-actions", { ...r, scope: without(s, "actions") }, "BadGrant"],
    ["empty-scope-object", { ...r, scope: {} }, "BadGrant"],
    ["empty-resources", { ...r, scope: { ...s, resources: [] } }, "BadGrant"],
    ["unsorted-resources", { ...r, scope: { ...s, resources: ["/z/**", "/a/**"] } }, "BadGrant"],
    ["duplicate-action", { ...r, scope: { ...s, actions: ["read", "read"] } }, "BadGrant"],
    ["bad-action-name", { ...r, scope: { ...s, actions: ["Read"] } }, "BadGrant"],
    ["uj-as-number", { ...r, budget: { uj: 5000000 } }, "BadGrant"],
    ["uj-leading-zero", { ...r, budget: { uj: "05000000" } }, "BadGrant"],
    ["uj-over-2-64", { ...r, budget: { uj: "18446744073709551616" } }, "BadGrant"],
    ["negative-calls", { ...r, budget: { uj: "1", calls: -1 } }, "BadGrant"],
    ["unknown-budget-member", { ...r, budget: { uj: "1", joules: 1 } }, "BadGrant"],
    ["depth-16", { ...r, depth: 16 }, "BadGrant"],
    ["empty-window", { ...r, nbf_ms: T0 + 24 * HOUR }, "BadGrant"],
    ["nonce-short", { ...r, nonce: "abcd" }, "BadGrant"],
    ["nonce-uppercase", { ...r, nonce: "ABCDEF0123456789ABCDEF0123456789" }, "BadGrant"],
    ["pattern-relative", { ...r, scope: { ...s, resources: ["fs/work/**"] } }, "BadPattern"],
    ["pattern-dotdot", { ...r, scope: { ...s, resources: ["/fs/work/../etc/**"] } }, "BadPattern"],
    ["pattern-inner-glob", { ...r, scope: { ...s, resources: ["/fs/**/secret"] } }, "BadPattern"],
    ["pattern-partial-star", { ...r, scope: { ...s, resources: ["/fs/work*"] } }, "BadPattern"],
    ["pattern-percent", { ...r, scope: { ...s, resources: ["/fs/a%2Fb"] } }, "BadPattern"],
    // §4.1 form order: the scope's patterns are checked before its action list and every later member.
    [
      "pattern-before-actions",
      { ...r, scope: { resources: ["/a/../b"], actions: ["write", "read"] } },
      "BadPattern",
    ],
    [
      "pattern-before-budget",
      { ...r, scope: { ...s, resources: ["/a/../b"] }, budget: { uj: 5 } },
      "BadPattern",
    ],
    ["pattern-before-nonce", { ...r, scope: { ...s, resources: ["/a/../b"] }, nonce: "x" }, "BadPattern"],
    ["pattern-before-root-complete", { ...r, scope: { resources: ["/a/../b"] } }, "BadPattern"],
    [
      "unknown-member-before-pattern",
      { ...r, scope: { ...s, resources: ["/a/../b"] }, extra: 1 },
      "BadGrant",
    ],
  ];
  return bad.map(([id, p, code]) =>
    errCase(
      C,
      `c11-form-${id}`,
      `grant form refused: ${id}`,
      "grant.open",
      open(sign(p, ROOT) as unknown as Json),
      code,
    ),
  );
}

/**
 * sigTextVectors: a `sig` that is not canonical base64 is checked with its signature (§4.1), after
 * the payload type, both size checks and the keyid's did:key, so each earlier code wins over it;
 * alone it is `BadEnvelope`.
 */
function sigTextVectors(e: Envelope, keyid: string): Vector[] {
  const bad = [{ keyid, sig: "not base64!" }];
  const big = signedRaw(GRANT_PAYLOAD_TYPE, sizedRoot(8193), ROOT);
  const cases: [string, string, unknown, string][] = [
    [
      "sig-not-base64",
      "a signature whose text is not base64: BadEnvelope",
      { ...e, signatures: bad },
      "BadEnvelope",
    ],
    [
      "sig-not-base64-wrong-type",
      "sig not base64 and another payload type: WrongPayloadType, the sig's text is not part of the shape",
      { ...e, payloadType: "application/vnd.jcp.other+json", signatures: bad },
      "WrongPayloadType",
    ],
    [
      "sig-not-base64-oversize-text",
      "sig not base64 and a payload text over 10924 characters: GrantTooLarge first",
      { ...oversize(), signatures: bad },
      "GrantTooLarge",
    ],
    [
      "sig-not-base64-8193-bytes",
      "sig not base64 and 8193 decoded payload bytes: GrantTooLarge, the decoded size comes first",
      { ...big, signatures: bad },
      "GrantTooLarge",
    ],
    [
      "sig-not-base64-bad-keyid",
      "sig not base64 under a keyid that is no did:key: BadDidKey, the keyid is read first",
      { ...e, signatures: [{ keyid: "did:key:zNotAKey", sig: "not base64!" }] },
      "BadDidKey",
    ],
  ];
  return cases.map(([id, desc, env, code]) =>
    errCase(C, `c11-${id}`, desc, "grant.open", open(env as Json), code),
  );
}

function signatureVectors(): Vector[] {
  const [r] = standardChain();
  const e = r!;
  const sig0 = e.signatures[0]!;
  const J = (x: unknown) => open(x as Json);
  const out: Vector[] = [
    errCase(
      C,
      "c11-sig-not-issuer",
      "validly signed, but not by the issuer it names",
      "grant.open",
      J(sign(rootPayload(), MALLORY)),
      "BadSignature",
    ),
    errCase(
      C,
      "c11-sig-two",
      "a second valid signature is refused: one signature, the issuer's",
      "grant.open",
      J({ ...e, signatures: [sig0, sign(rootPayload(), MALLORY).signatures[0]] }),
      "BadSignature",
    ),
    errCase(
      C,
      "c11-sig-keyid-swapped",
      "the issuer's signature relabelled as mallory's",
      "grant.open",
      J({ ...e, signatures: [{ keyid: MALLORY.did, sig: sig0.sig }] }),
      "BadSignature",
    ),
    errCase(
      C,
      "c11-wrong-type",
      "another payload type",
      "grant.open",
      J({ ...e, payloadType: "application/vnd.jcp.other+json" }),
      "WrongPayloadType",
    ),
    errCase(C, "c11-no-signature", "no signature", "grant.open", J({ ...e, signatures: [] }), "BadEnvelope"),
    errCase(
      C,
      "c11-oversize",
      "a payload over 8 KiB is refused before its signature is checked",
      "grant.open",
      J(oversize()),
      "GrantTooLarge",
    ),
    // §4.1: the size is checked on the base64 text before decoding (more than 10924 characters, the
    // length of 8192 bytes in base64, whatever the characters are) and again on the decoded bytes.
    errCase(
      C,
      "c11-oversize-text-not-base64",
      "10925 characters that are not base64: GrantTooLarge, the text's length is checked before decoding",
      "grant.open",
      J({ ...e, payload: "!".repeat(10925) }),
      "GrantTooLarge",
    ),
    errCase(
      C,
      "c11-oversize-two-signatures",
      "an oversize payload with two signatures: GrantTooLarge, checked before the signature count",
      "grant.open",
      J({ ...oversize(), signatures: [sig0, sig0] }),
      "GrantTooLarge",
    ),
    errCase(
      C,
      "c11-oversize-8193-bytes",
      "8193 payload bytes (10924 base64 characters, like 8192): GrantTooLarge on the decoded bytes",
      "grant.open",
      J(signedRaw(GRANT_PAYLOAD_TYPE, sizedRoot(8193), ROOT)),
      "GrantTooLarge",
    ),
    // §4.1 and sandbox-attest §2.9: the 10924 characters are UTF-16 code units. 10923 ASCII
    // characters and one above U+FFFF are 10925 units (10924 code points), too long; 10923 ASCII
    // characters and "é" are 10924 units (10925 UTF-8 bytes), not too long, then not base64.
    errCase(
      C,
      "c11-text-10925-units-astral",
      "payload text of 10923 ASCII characters and one above U+FFFF: 10925 UTF-16 units, GrantTooLarge",
      "grant.open",
      J({ ...e, payload: "A".repeat(10923) + "\u{1F600}" }),
      "GrantTooLarge",
    ),
    errCase(
      C,
      "c11-text-10924-units-non-ascii",
      "payload text of 10923 ASCII characters and one é: 10924 UTF-16 units, not too long; not base64",
      "grant.open",
      J({ ...e, payload: "A".repeat(10923) + "é" }),
      "BadEnvelope",
    ),
    ...sigTextVectors(e, sig0.keyid),
    openOk(
      "c11-root-exp-zero-opens",
      "a root stating exp_ms 0 without nbf_ms opens: only a stated nbf_ms is compared (§4.1 form item 7)",
      sign(rootExpZero(), ROOT),
    ),
    openOk(
      "c11-size-8192-bytes",
      "a root grant of exactly 8192 payload bytes opens",
      sizedRootEnvelope(8192),
    ),
    errCase(
      C,
      "c11-noncanonical",
      "a validly signed payload not in JCS form",
      "grant.open",
      J(signedRaw(GRANT_PAYLOAD_TYPE, utf8('{"issuer":"x", "holder":"y"}'), ROOT)),
      "NotCanonical",
    ),
  ];
  const bytes = Buffer.from(e.payload, "base64");
  for (let i = 0; i < bytes.length; i += Math.ceil(bytes.length / 12))
    out.push(
      errCase(
        C,
        `c11-payload-bit-${i}`,
        `payload byte ${i} flipped`,
        "grant.open",
        J({ ...e, payload: flipBase64Byte(e.payload, i) }),
        "BadSignature",
      ),
    );
  for (const i of [0, 31, 32, 63])
    out.push(
      errCase(
        C,
        `c11-sig-bit-${i}`,
        `signature byte ${i} flipped`,
        "grant.open",
        J({ ...e, signatures: [{ keyid: sig0.keyid, sig: flipBase64Byte(sig0.sig, i) }] }),
        "BadSignature",
      ),
    );
  return out;
}

/** sizedRoot returns the canonical bytes of a valid root payload of exactly `n` bytes (n ≥ 600). */
function sizedRoot(n: number): Uint8Array {
  const base = rootPayload();
  // Grow the padding over several patterns of at most 250 bytes until the payload is n bytes long.
  const pads: string[] = [];
  const bytes = () =>
    utf8(canonicalize({ ...base, scope: { resources: ["/fs/work/**", ...pads], actions: ["read"] } }));
  while (bytes().length + 256 < n)
    pads.push(`/pad${String(pads.length).padStart(2, "0")}/${"x".repeat(240)}`);
  const last = n - bytes().length - 3 - `/pad${String(pads.length).padStart(2, "0")}/`.length;
  if (last < 1) throw new Error(`sizedRoot(${n}): cannot pad to size`);
  pads.push(`/pad${String(pads.length).padStart(2, "0")}/${"x".repeat(last)}`);
  const out = bytes();
  if (out.length !== n) throw new Error(`sizedRoot(${n}): got ${out.length} bytes`);
  return out;
}

function sizedRootEnvelope(n: number): Envelope {
  return signedRaw(GRANT_PAYLOAD_TYPE, sizedRoot(n), ROOT);
}

function oversize(): Envelope {
  const resources = Array.from(
    { length: 64 },
    (_, i) => `/fs/${String(i).padStart(3, "0")}/${"x".repeat(124)}/**`,
  );
  return sign(rootPayload({ scope: { resources, actions: ["read"] } }), ROOT);
}

function childFormVectors(): Vector[] {
  const [r] = standardChain();
  const p = childPayload(r!, ALICE, BOB, "child-min");
  const cite = { policy: addressOf({ policy: "example" }), event: addressOf({ event: "example" }) };
  const minted = { ...childPayload(r!, ALICE, BOB, "child-minted"), mint: cite };
  return [
    okCase(
      C,
      "c11-child-minimal",
      "a child may state only issuer, holder, parent, exp_ms and nonce",
      "grant.open",
      open(sign(p, ALICE) as unknown as Json),
      { address: addr(sign(p, ALICE)), payload: p },
    ),
    okCase(
      C,
      "c11-child-minted",
      "a minted child cites its mint policy and event (§4.6)",
      "grant.open",
      open(sign(minted, ALICE) as unknown as Json),
      { address: addr(sign(minted, ALICE)), payload: minted },
    ),
    errCase(
      C,
      "c11-root-minted",
      "a root cannot be minted",
      "grant.open",
      open(sign(rootPayload({ mint: cite }), ROOT) as unknown as Json),
      "BadGrant",
    ),
    errCase(
      C,
      "c11-mint-malformed",
      "mint without its event",
      "grant.open",
      open(sign({ ...p, mint: { policy: cite.policy } }, ALICE) as unknown as Json),
      "BadGrant",
    ),
    errCase(
      C,
      "c11-child-empty-budget",
      "an empty budget object is refused: leave it out to inherit",
      "grant.open",
      open(sign({ ...p, budget: {} }, ALICE) as unknown as Json),
      "BadGrant",
    ),
  ];
}

export const klass: ConformanceClass = {
  id: C,
  title: "grant format and signatures",
  file: "grants.json",
  ops: { "grant.open": grantOpen },
  generate: () => [...validVectors(), ...formVectors(), ...signatureVectors(), ...childFormVectors()],
};
