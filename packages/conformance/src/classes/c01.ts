// C1: canonical encoding, digests, signatures, did:key (sandbox-attest §2).
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import {
  addAmounts,
  addressOf,
  canonicalize,
  chainHeads,
  base58btcEncode,
  didKeyFromPublicKey,
  ed25519Refusal,
  digestBytes,
  fromHex,
  isDigest,
  openEnvelope,
  pae,
  parseAmount,
  parseCanonical,
  parseStrict,
  publicKeyFromDidKey,
  signPayload,
  testKey,
  toHex,
  utf8,
  WireError,
  type Json,
  type JsonObject,
} from "@sbx/wire";
import { errCase, flipBase64Byte, okCase, signedRaw } from "../generate/build.ts";
import { ed25519EdgeCases, refusedKeys } from "../generate/ed25519edge.ts";
import { key } from "../generate/keys.ts";
import { testdataDir } from "../paths.ts";
import type { ConformanceClass, Handler, Vector } from "../types.ts";
import { obj, str } from "./input.ts";

const C = "C1" as const;
const ext = join(testdataDir, "vectors");

/** field reads the string member `k` of the input object. */
const field = (o: JsonObject, k: string): string => str(o[k], `input.${k}`);

/** The official BLAKE3 input of length n: bytes i mod 251. */
function pattern(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = i % 251;
  return b;
}

const ops: Record<string, Handler> = {
  // RFC 8785 over any finite numbers: the published pairs use fractions.
  "jcs.canonicalize": (i) => ({
    canonical: canonicalize(parseStrict(field(obj(i), "text"), { numbers: "doubles" }), "doubles"),
  }),
  // Protocol parse: safe integers only, every strict refusal.
  "json.parse_strict": (i) => ({ canonical: canonicalize(parseStrict(field(obj(i), "text"))) }),
  "json.parse_canonical": (i) => ({ address: addressOf(parseCanonical(utf8(field(obj(i), "text")))) }),
  "digest.blake3": (i) => {
    const o = obj(i);
    const data = typeof o.pattern_len === "number" ? pattern(o.pattern_len) : fromHex(field(o, "hex"));
    return { digest: digestBytes(data) };
  },
  "digest.address": (i) => ({ address: addressOf(obj(i).value) }),
  // §2.4: the first refusal of the Ed25519 rule, by its code.
  "ed25519.verify": (i) => {
    const o = obj(i);
    const why = ed25519Refusal(
      fromHex(field(o, "public_key")),
      fromHex(field(o, "message")),
      fromHex(field(o, "signature")),
    );
    if (why) throw new WireError(why, "signature refused by the rule of §2.4");
    return null;
  },
  "didkey.encode": (i) => ({ did: didKeyFromPublicKey(fromHex(field(obj(i), "public_key"))) }),
  "didkey.decode": (i) => ({ public_key: toHex(publicKeyFromDidKey(field(obj(i), "did"))) }),
  "testkey.derive": (i) => ({ did: testKey(field(obj(i), "name")).did }),
  "dsse.pae": (i) => ({ pae: toHex(pae(field(obj(i), "payloadType"), fromHex(field(obj(i), "body_hex")))) }),
  "dsse.verify": (i) => {
    const o = obj(i);
    const signers = Array.isArray(o.signers) ? o.signers.map(String) : undefined;
    const opened = openEnvelope(o.envelope, {
      payloadType: field(o, "payloadType"),
      ...(signers ? { signers } : {}),
      ...(typeof o.limit === "number" ? { maxBytes: o.limit } : {}),
    });
    return { address: opened.address, payload: opened.payload, signers: [...opened.signers] };
  },
  "chain.heads": (i) => {
    const o = obj(i);
    const ids = (o.ids as Json[]).map((x) => {
      if (!isDigest(x)) throw new WireError("BadDigest", "id is not a digest");
      return x;
    });
    return { heads: chainHeads(field(o, "tag"), ids, o.entries as Json[]) };
  },
  "amount.add": (i) => ({ sum: addAmounts(...(obj(i).amounts as string[])) }),
  "amount.parse": (i) => ({ value: parseAmount(obj(i).amount).toString() }),
};

function jcsVectors(): Vector[] {
  const dir = join(ext, "jcs/input");
  return readdirSync(dir)
    .sort()
    .map((f) =>
      okCase(
        C,
        `c1-jcs-rfc8785-${f.replace(".json", "")}`,
        `RFC 8785 published pair ${f}`,
        "jcs.canonicalize",
        { text: readFileSync(join(dir, f), "utf8") },
        {
          canonical: readFileSync(join(ext, "jcs/output", f), "utf8"),
        },
      ),
    );
}

/**
 * jcsNumberVectors: RFC 8785 §3.2.2.3 writes a number as ECMAScript's Number::toString of the
 * nearest double (shortest round-trip digits; exponent form from 1e21 up and below 1e-6; -0 as 0).
 * Each expected text is that rule applied by hand.
 */
function jcsNumberVectors(): Vector[] {
  const cases: [string, string, string][] = [
    ["negative-zero", "[-0]", "[0]"],
    ["1e21", "[1e21]", "[1e+21]"],
    ["1e20", "[1e20]", "[100000000000000000000]"],
    ["1e-6", "[0.000001]", "[0.000001]"],
    ["1e-7", "[1e-7]", "[1e-7]"],
    ["1.5e300", "[1.5E300]", "[1.5e+300]"],
    ["2-53-plus-1", "[9007199254740993]", "[9007199254740992]"],
    ["min-subnormal", "[5e-324]", "[5e-324]"],
    ["trailing-zeros", "[1.500]", "[1.5]"],
  ];
  return cases.map(([id, text, canonical]) =>
    okCase(
      C,
      `c1-jcs-number-${id}`,
      `RFC 8785 §3.2.2.3 number form: ${text} is ${canonical}`,
      "jcs.canonicalize",
      { text },
      { canonical },
    ),
  );
}

function strictParseVectors(): Vector[] {
  const bad: [string, string, string][] = [
    ["duplicate-key", '{"a":1,"a":2}', "DuplicateKey"],
    ["duplicate-key-by-escape", '{"a":1,"\\u0061":2}', "DuplicateKey"],
    ["proto-key", '{"__proto__":{"x":1}}', "ForbiddenKey"],
    ["constructor-key", '{"constructor":1}', "ForbiddenKey"],
    ["prototype-key", '{"a":{"prototype":1}}', "ForbiddenKey"],
    ["lone-high-surrogate", '{"a":"\\ud800"}', "LoneSurrogate"],
    ["lone-low-surrogate-key", '{"\\udc00":1}', "LoneSurrogate"],
    ["unsafe-integer", '{"a":9007199254740993}', "UnsafeNumber"],
    ["unsafe-negative", '{"a":-9007199254740992}', "UnsafeNumber"],
    ["fraction", '{"a":1.5}', "UnsafeNumber"],
    ["overflow", '{"a":1e400}', "UnsafeNumber"],
    ["trailing-comma", '{"a":1,}', "InvalidJson"],
    ["trailing-text", '{"a":1} x', "InvalidJson"],
    ["comment", '{"a":1 /* c */}', "InvalidJson"],
    ["leading-zero", '{"a":01}', "InvalidJson"],
    ["too-deep", "[".repeat(65) + "]".repeat(65), "TooDeep"],
    ["too-deep-objects", '{"a":'.repeat(65) + "1" + "}".repeat(65), "TooDeep"],
    // §2.1: a number is an integer by its text; a fraction or exponent is refused whatever its value.
    ["exponent-one", '{"a":1e0}', "UnsafeNumber"],
    ["exponent-upper", '{"a":1E2}', "UnsafeNumber"],
    ["fraction-zero", '{"a":1.0}', "UnsafeNumber"],
    ["underflow-to-zero", '{"a":1e-400}', "UnsafeNumber"],
    ["huge-negative-exponent", '{"a":123e-10000000}', "UnsafeNumber"],
    ["fraction-rounds-to-integer", '{"a":1.0000000000000001}', "UnsafeNumber"],
    ["half-below-safe-max", '{"a":9007199254740990.5}', "UnsafeNumber"],
    ["safe-max-plus-one", '{"a":9007199254740992}', "UnsafeNumber"],
    ["long-integer", `{"a":1${"0".repeat(400)}}`, "UnsafeNumber"],
  ];
  return [
    okCase(
      C,
      "c1-parse-safe-max",
      "largest safe integer is accepted",
      "json.parse_strict",
      { text: '{"n":9007199254740991,"m":-9007199254740991}' },
      { canonical: '{"m":-9007199254740991,"n":9007199254740991}' },
    ),
    okCase(
      C,
      "c1-parse-negative-zero",
      "-0 is an integer by its text; it reads as 0",
      "json.parse_strict",
      { text: '{"a":-0}' },
      { canonical: '{"a":0}' },
    ),
    okCase(
      C,
      "c1-parse-depth-64",
      "nesting of exactly 64 is accepted",
      "json.parse_strict",
      { text: "[".repeat(64) + "]".repeat(64) },
      { canonical: "[".repeat(64) + "]".repeat(64) },
    ),
    okCase(
      C,
      "c1-parse-surrogate-pair",
      "an escaped surrogate pair is one character",
      "json.parse_strict",
      { text: '{"a":"\\ud83d\\ude00"}' },
      { canonical: '{"a":"😀"}' },
    ),
    ...bad.map(([id, text, code]) =>
      errCase(C, `c1-parse-${id}`, `strict parse refuses ${id}`, "json.parse_strict", { text }, code),
    ),
  ];
}

function canonicalFormVectors(): Vector[] {
  const good = '{"a":[1,"x",null,true],"b":{"c":"é"}}';
  const noncanon: [string, string][] = [
    ["whitespace", '{"a": [1,"x",null,true],"b":{"c":"é"}}'],
    ["key-order", '{"b":{"c":"é"},"a":[1,"x",null,true]}'],
    ["escaped-letter", '{"a":[1,"\\u0078",null,true],"b":{"c":"é"}}'],
    ["negative-zero", '{"a":[-0,"x",null,true],"b":{"c":"é"}}'],
    ["trailing-newline", good + "\n"],
  ];
  return [
    okCase(
      C,
      "c1-canonical-ok",
      "bytes already in JCS form",
      "json.parse_canonical",
      { text: good },
      { address: addressOf(parseStrict(good)) },
    ),
    // An exponent is refused by the strict parse (§2.1, by its text) before bytes are compared.
    errCase(
      C,
      "c1-canonical-exponent",
      "an integer written with an exponent is refused by its text",
      "json.parse_canonical",
      { text: '{"a":[1e0,"x",null,true],"b":{"c":"é"}}' },
      "UnsafeNumber",
    ),
    ...noncanon.map(([id, text]) =>
      errCase(
        C,
        `c1-canonical-${id}`,
        `non-canonical bytes (${id}) are refused`,
        "json.parse_canonical",
        { text },
        "NotCanonical",
      ),
    ),
  ];
}

function blake3Vectors(): Vector[] {
  const tv = JSON.parse(readFileSync(join(ext, "blake3/test_vectors.json"), "utf8")) as {
    cases: { input_len: number; hash: string }[];
  };
  return [
    ...tv.cases.map((c) =>
      okCase(
        C,
        `c1-blake3-official-${c.input_len}`,
        `official BLAKE3 vector, input length ${c.input_len} (first 32 bytes)`,
        "digest.blake3",
        { pattern_len: c.input_len },
        {
          digest: `blake3:${c.hash.slice(0, 64)}`,
        },
      ),
    ),
    okCase(
      C,
      "c1-address-object",
      "content address = BLAKE3 of JCS bytes",
      "digest.address",
      { value: { b: "2", a: 1 } },
      { address: digestBytes(utf8('{"a":1,"b":"2"}')) },
    ),
  ];
}

function ed25519Vectors(): Vector[] {
  const rv = JSON.parse(readFileSync(join(ext, "ed25519/rfc8032.json"), "utf8")) as {
    cases: { id: string; public_key: string; message: string; signature: string; expect: string }[];
  };
  const out: Vector[] = [];
  for (const c of rv.cases) {
    const input = { public_key: c.public_key, message: c.message, signature: c.signature };
    out.push(
      c.expect === "valid"
        ? okCase(C, `c1-ed25519-${c.id}`, `RFC 8032 ${c.id}`, "ed25519.verify", input, null)
        : errCase(
            C,
            `c1-ed25519-${c.id}`,
            `RFC 8032 §5.1.7: ${c.id} refused`,
            "ed25519.verify",
            input,
            c.id === "noncanonical-s" ? "NonCanonicalS" : "BadSignature",
          ),
    );
    out.push(
      okCase(
        C,
        `c1-didkey-${c.id}`,
        `did:key of the ${c.id} public key`,
        "didkey.encode",
        { public_key: c.public_key },
        { did: didKeyFromPublicKey(fromHex(c.public_key)) },
      ),
    );
  }
  const t1 = rv.cases[0]!;
  out.push(
    errCase(
      C,
      "c1-ed25519-flipped-message",
      "test 1 signature over a changed message",
      "ed25519.verify",
      { public_key: t1.public_key, message: "00", signature: t1.signature },
      "BadSignature",
    ),
  );
  return out;
}

// §2.4 edge classes, built from first principles (generate/ed25519edge.ts), verdicts by the rule.
function ed25519EdgeVectors(): Vector[] {
  return ed25519EdgeCases().map((c) => {
    const input = { public_key: c.public_key, message: c.message, signature: c.signature };
    const id = `c1-ed25519-edge-${c.id}`;
    return c.expect === "ok"
      ? okCase(C, id, c.desc, "ed25519.verify", input, null)
      : errCase(C, id, c.desc, "ed25519.verify", input, c.expect);
  });
}

// §2.5: the keys §2.4 refuses have no did:key, neither to decode nor to encode.
function refusedDidVectors(): Vector[] {
  return refusedKeys().flatMap(({ why, key: pk }) => [
    errCase(
      C,
      `c1-didkey-decode-refused-${why}`,
      `did:key of a key §2.4 refuses (${why})`,
      "didkey.decode",
      { did: "did:key:z" + base58btcEncode(Uint8Array.from([0xed, 0x01, ...fromHex(pk)])) },
      "BadDidKey",
    ),
    errCase(
      C,
      `c1-didkey-encode-refused-${why}`,
      `no did:key for a key §2.4 refuses (${why})`,
      "didkey.encode",
      { public_key: pk },
      "BadDidKey",
    ),
  ]);
}

function didVectors(): Vector[] {
  const steward = key("steward");
  const out: Vector[] = [
    okCase(
      C,
      "c1-didkey-decode-steward",
      "did:key decodes to its public key",
      "didkey.decode",
      { did: steward.did },
      { public_key: toHex(steward.publicKey) },
    ),
  ];
  const bad: [string, string][] = [
    ["wrong-method", steward.did.replace("did:key:", "did:web:")],
    ["wrong-multibase", steward.did.replace("did:key:z", "did:key:m")],
    ["bad-base58-char", steward.did.slice(0, -1) + "0"],
    ["truncated", steward.did.slice(0, -2)],
    ["secp256k1-codec", "did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme"],
  ];
  for (const [id, did] of bad)
    out.push(errCase(C, `c1-didkey-${id}`, `did:key refused: ${id}`, "didkey.decode", { did }, "BadDidKey"));
  for (const name of ["steward", "host", "alice"] as const)
    out.push(
      okCase(
        C,
        `c1-testkey-${name}`,
        `test key "${name}" from its fixed seed (§2.10)`,
        "testkey.derive",
        { name },
        { did: key(name).did },
      ),
    );
  return out;
}

function dsseVectors(): Vector[] {
  const T = "application/vnd.sandbox-attest.example+json";
  const steward = key("steward");
  const payload = { kind: "example", n: 1, note: "signed" };
  const env = signPayload(T, payload, steward);
  const addr = addressOf(payload);
  const verify = (envelope: Json, extra: JsonObject = {}): Json => ({
    envelope,
    payloadType: T,
    signers: [steward.did],
    ...extra,
  });
  const e = env as unknown as JsonObject;
  const sig0 = env.signatures[0]!;
  const out: Vector[] = [
    okCase(
      C,
      "c1-dsse-pae",
      "DSSE pre-authentication encoding",
      "dsse.pae",
      { payloadType: T, body_hex: toHex(utf8("{}")) },
      { pae: toHex(pae(T, utf8("{}"))) },
    ),
    okCase(
      C,
      "c1-dsse-valid",
      "a signed envelope verifies; its address is its payload's",
      "dsse.verify",
      verify(e),
      { address: addr, payload, signers: [steward.did] },
    ),
    okCase(
      C,
      "c1-dsse-any-accepted-signer",
      "of two acceptable signers one signed: accepted (§2.4 item 4, any one of them suffices)",
      "dsse.verify",
      verify(e, { signers: [steward.did, key("host").did] }),
      { address: addr, payload, signers: [steward.did] },
    ),
    errCase(
      C,
      "c1-dsse-wrong-type",
      "payloadType differs from the expected one",
      "dsse.verify",
      verify(e, { payloadType: T + ".other" }),
      "WrongPayloadType",
    ),
    errCase(
      C,
      "c1-dsse-other-signer",
      "valid signature by a key the verifier did not name",
      "dsse.verify",
      verify(signPayload(T, payload, key("mallory")) as unknown as Json),
      "UnknownSigner",
    ),
    errCase(
      C,
      "c1-dsse-keyid-swapped",
      "signature relabelled with another key's did",
      "dsse.verify",
      verify({ ...e, signatures: [{ keyid: key("mallory").did, sig: sig0.sig }] }),
      "BadSignature",
    ),
    errCase(
      C,
      "c1-dsse-type-swapped",
      "signature over another payloadType",
      "dsse.verify",
      verify({ ...e, payloadType: T + ".x" }, { payloadType: T + ".x" }),
      "BadSignature",
    ),
    errCase(
      C,
      "c1-dsse-no-signatures",
      "an envelope with no signature",
      "dsse.verify",
      verify({ ...e, signatures: [] }),
      "BadEnvelope",
    ),
    errCase(
      C,
      "c1-dsse-extra-member",
      "an envelope with an unknown member",
      "dsse.verify",
      verify({ ...e, extra: 1 }),
      "BadEnvelope",
    ),
    errCase(
      C,
      "c1-dsse-bad-base64",
      "payload that is not canonical base64",
      "dsse.verify",
      verify({ ...e, payload: env.payload.replace(/=*$/, "") + "!" }),
      "BadEnvelope",
    ),
    ...dsseOrderVectors(e, verify, { address: addr, payload, signers: [steward.did] }),
  ];
  const bytes = Buffer.from(env.payload, "base64");
  for (let i = 0; i < bytes.length; i += 7)
    out.push(
      errCase(
        C,
        `c1-dsse-payload-bit-${i}`,
        `payload byte ${i} flipped`,
        "dsse.verify",
        verify({ ...e, payload: flipBase64Byte(env.payload, i) }),
        "BadSignature",
      ),
    );
  for (const i of [0, 31, 32, 63])
    out.push(
      errCase(
        C,
        `c1-dsse-sig-bit-${i}`,
        `signature byte ${i} flipped`,
        "dsse.verify",
        verify({ ...e, signatures: [{ keyid: sig0.keyid, sig: flipBase64Byte(sig0.sig, i) }] }),
        "BadSignature",
      ),
    );
  // A correctly signed payload whose bytes are not canonical is refused before any signature is used.
  const loose = utf8('{"n":1, "kind":"example"}');
  out.push(
    errCase(
      C,
      "c1-dsse-noncanonical-signed",
      "validly signed non-canonical payload",
      "dsse.verify",
      verify(signedRaw(T, loose, key("steward"))),
      "NotCanonical",
    ),
  );
  return out;
}

function chainVectors(): Vector[] {
  const ids = [addressOf({ unit: "u" }), addressOf({ grants: "g" })];
  const entries: Json[] = [{ n: 1 }, { n: 2, x: "y" }];
  return [
    okCase(
      C,
      "c1-chain-heads",
      "head₀ = H(tag ‖ ids), headₙ = H(headₙ₋₁ ‖ JCS(entry))",
      "chain.heads",
      { tag: "sandbox.example/1", ids, entries },
      { heads: chainHeads("sandbox.example/1", ids, entries) },
    ),
    okCase(
      C,
      "c1-chain-no-ids",
      "a chain that binds no ids",
      "chain.heads",
      { tag: "t", ids: [], entries: [] },
      { heads: [digestBytes(utf8("t"))] },
    ),
    errCase(
      C,
      "c1-chain-bad-id",
      "a bound id that is not a digest",
      "chain.heads",
      { tag: "t", ids: ["sha256:00"], entries: [] },
      "BadDigest",
    ),
  ];
}

function amountVectors(): Vector[] {
  const max = "18446744073709551615";
  return [
    okCase(
      C,
      "c1-amount-add",
      "amounts add exactly past 2^53",
      "amount.add",
      { amounts: ["9007199254740993", "1"] },
      { sum: "9007199254740994" },
    ),
    okCase(
      C,
      "c1-amount-max",
      "2^64 − 1 is the largest amount",
      "amount.add",
      { amounts: [max, "0"] },
      { sum: max },
    ),
    errCase(
      C,
      "c1-amount-overflow",
      "a sum above 2^64 − 1 is refused",
      "amount.add",
      { amounts: [max, "1"] },
      "AmountOverflow",
    ),
    // §11.3 `amount.parse` row: the output is `value`, the amount as a decimal string.
    okCase(
      C,
      "c1-amount-parse-max",
      "2^64 − 1, the largest amount",
      "amount.parse",
      { amount: max },
      { value: max },
    ),
    okCase(C, "c1-amount-parse-zero", "zero is an amount", "amount.parse", { amount: "0" }, { value: "0" }),
    errCase(
      C,
      "c1-amount-too-large",
      "an amount above 2^64 − 1 is refused",
      "amount.parse",
      { amount: "18446744073709551616" },
      "AmountOverflow",
    ),
    ...["01", "-1", "1e3", " 1", "1.0", "", "0x10"].map((a, n) =>
      errCase(
        C,
        `c1-amount-bad-${n}`,
        `malformed amount ${JSON.stringify(a)}`,
        "amount.parse",
        { amount: a },
        "BadAmount",
      ),
    ),
    errCase(
      C,
      "c1-amount-number",
      "an amount as a JSON number is refused",
      "amount.parse",
      { amount: 5 },
      "BadAmount",
    ),
  ];
}

export const klass: ConformanceClass = {
  id: C,
  title: "canonical encoding, digests, signatures",
  file: "core.json",
  ops,
  generate: () => [
    ...jcsVectors(),
    ...jcsNumberVectors(),
    ...strictParseVectors(),
    ...canonicalFormVectors(),
    ...blake3Vectors(),
    ...ed25519Vectors(),
    ...ed25519EdgeVectors(),
    ...didVectors(),
    ...refusedDidVectors(),
    ...dsseVectors(),
    ...chainVectors(),
    ...amountVectors(),
  ],
};

/**
 * dsseOrderVectors pin §2.4 item 4's order around base64: the size limit compares the decoded
 * payload bytes, not the base64 text; the payload's base64 is read after the payload type; each
 * `sig`'s base64 is read with its signature, after its keyid's did:key.
 */
function dsseOrderVectors(
  e: JsonObject,
  verify: (env: Json, extra?: JsonObject) => Json,
  ok: Json,
): Vector[] {
  const n = Buffer.from(e.payload as string, "base64").length;
  const badSig = (keyid: string) => ({ ...e, signatures: [{ keyid, sig: "not base64!" }] });
  const keyid = ((e.signatures as JsonObject[])[0] as { keyid: string }).keyid;
  return [
    okCase(
      C,
      "c1-dsse-limit-decoded-bytes",
      `a limit of exactly the ${n} decoded payload bytes (the base64 text is longer): accepted`,
      "dsse.verify",
      verify(e, { limit: n }),
      ok,
    ),
    errCase(
      C,
      "c1-dsse-limit-one-below",
      "a limit one byte below the decoded payload: OversizeInput",
      "dsse.verify",
      verify(e, { limit: n - 1 }),
      "OversizeInput",
    ),
    errCase(
      C,
      "c1-dsse-wrong-type-before-base64",
      "another payload type and a payload that is not base64: WrongPayloadType first",
      "dsse.verify",
      verify({ ...e, payload: "not base64!" }, { payloadType: "application/vnd.sandbox-attest.other+json" }),
      "WrongPayloadType",
    ),
    errCase(
      C,
      "c1-dsse-sig-not-base64",
      "a sig that is not base64: BadEnvelope, read with its signature",
      "dsse.verify",
      verify(badSig(keyid)),
      "BadEnvelope",
    ),
    errCase(
      C,
      "c1-dsse-sig-not-base64-oversize",
      "a sig that is not base64 and a payload over the limit: OversizeInput first",
      "dsse.verify",
      verify(badSig(keyid), { limit: n - 1 }),
      "OversizeInput",
    ),
    errCase(
      C,
      "c1-dsse-bad-keyid-before-sig-base64",
      "a keyid that is no did:key and a sig that is not base64: BadDidKey first",
      "dsse.verify",
      verify(badSig("did:key:zNotAKey")),
      "BadDidKey",
    ),
  ];
}
