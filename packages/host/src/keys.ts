// Key files in the standard forms: an Ed25519 private key as PKCS#8 PEM (RFC 5208/5958, RFC 8410),
// written with mode 0600, and its public key as SubjectPublicKeyInfo PEM (RFC 5280, RFC 8410), so
// `openssl pkey -in key.pem -pubout` and other tooling read them. The JSON key files of earlier
// versions ({kty, seed, did}) are still read, with a deprecation warning naming the conversion.
import { existsSync, statSync } from "node:fs";
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import {
  didKeyFromPublicKey,
  fromHex,
  generateKeyPair,
  isDidKey,
  keyPairFromSeed,
  parseStrict,
  type KeyPair,
} from "@sbx/wire";
import { HostError } from "./errors.ts";
import { MAX_KEY_BYTES, readInput, writeOutput } from "./files.ts";

// RFC 8410 §7 and §4: the DER of an Ed25519 PKCS#8 v1 private key and of an SPKI public key are
// these fixed prefixes followed by the 32-byte seed or public key.
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

function pem(label: string, der: Buffer): string {
  const b64 = der.toString("base64").replace(/.{1,64}/g, "$&\n");
  return `-----BEGIN ${label}-----\n${b64}-----END ${label}-----\n`;
}

/** privateKeyPem is the PKCS#8 PEM text of a key pair's seed. */
export function privateKeyPem(kp: KeyPair): string {
  return pem("PRIVATE KEY", Buffer.concat([PKCS8_PREFIX, kp.seed]));
}

/** publicKeyPem is the SubjectPublicKeyInfo PEM text of a key pair's public key. */
export function publicKeyPem(publicKey: Uint8Array): string {
  return pem("PUBLIC KEY", Buffer.concat([SPKI_PREFIX, publicKey]));
}

/** publicPathOf is where keygen writes the public key beside `path`: key.pem → key.pub.pem. */
export function publicPathOf(path: string): string {
  return path.endsWith(".pem") ? `${path.slice(0, -4)}.pub.pem` : `${path}.pub.pem`;
}

/**
 * writeKey writes a key pair as a PKCS#8 PEM private key (mode 0600) at `path` and its SPKI PEM
 * public key at `pubPath`; refuses (`OutputExists`) to replace either unless `force`.
 */
export function writeKey(kp: KeyPair, path: string, pubPath: string, force = false): void {
  // Both are refused before either is written, so a refusal leaves nothing behind.
  for (const [p, what] of [
    [path, "key file"],
    [pubPath, "public key file"],
  ] as const) {
    if (existsSync(p) && statSync(p).isDirectory())
      throw new HostError("NotAFile", `${what} ${p} is a directory, not a file`, { detail: { output: p } });
    if (!force && existsSync(p))
      throw new HostError("OutputExists", `${what} ${p} exists; pass --force to replace it`, {
        detail: { output: p },
      });
  }
  writeOutput(path, privateKeyPem(kp), { mode: 0o600, exclusive: !force, what: "key file" });
  writeOutput(pubPath, publicKeyPem(kp.publicKey), { exclusive: !force, what: "public key file" });
}

/** writeNewKey makes a random key and writes it (writeKey). */
export function writeNewKey(path: string, pubPath: string, force = false): KeyPair {
  const kp = generateKeyPair();
  writeKey(kp, path, pubPath, force);
  return kp;
}

function badKey(path: string, why: string): HostError {
  return new HostError("BadKeyFile", `key file ${path}: ${why}`, { detail: { input: path } });
}

function jwkBytes(k: KeyObject, member: "d" | "x", path: string): Uint8Array {
  if (k.asymmetricKeyType !== "ed25519")
    throw badKey(path, `an ${k.asymmetricKeyType ?? "unknown"} key, not Ed25519`);
  const v = (k.export({ format: "jwk" }) as Record<string, unknown>)[member];
  if (typeof v !== "string") throw badKey(path, "no Ed25519 key material");
  const b = Buffer.from(v, "base64url");
  if (b.length !== 32) throw badKey(path, "Ed25519 key material is not 32 bytes");
  return new Uint8Array(b);
}

/** Where a deprecation warning goes; the binaries' stderr unless a caller sets another. */
export const keyWarnings: { warn: (line: string) => void } = {
  warn: (line) => {
    process.stderr.write(line + "\n");
  },
};

/** readLegacy reads the deprecated JSON key file form {kty, seed, did}, with a warning. */
function readLegacy(path: string, text: string): KeyPair {
  let f: Record<string, unknown>;
  try {
    f = parseStrict(text) as Record<string, unknown>;
  } catch {
    throw badKey(path, "neither PEM nor a key file of an earlier version");
  }
  if (f.kty !== "Ed25519" || typeof f.seed !== "string" || !/^[0-9a-f]{64}$/.test(f.seed))
    throw badKey(path, "not an Ed25519 key file");
  const kp = keyPairFromSeed(fromHex(f.seed));
  if (f.did !== kp.did) throw badKey(path, `did ${String(f.did)} does not match its seed`);
  keyWarnings.warn(
    `warning: ${path} is a JSON key file of an earlier version (deprecated); convert it with: sbx keygen --from ${path} --out KEY.pem`,
  );
  return kp;
}

function keyText(path: string): string {
  return readInput(path, "key file", MAX_KEY_BYTES).toString("utf8");
}

/**
 * readKey loads a private key: PKCS#8 PEM (unencrypted), or the deprecated JSON form (with a
 * warning). Refuses (HostError, the file in its detail) an unreadable or oversize file, a public key, an encrypted
 * or non-Ed25519 key, or anything else (`BadKeyFile`).
 */
export function readKey(path: string): KeyPair {
  const text = keyText(path);
  if (text.trimStart().startsWith("{")) return readLegacy(path, text);
  if (text.includes("-----BEGIN PUBLIC KEY-----"))
    throw badKey(path, "a public key; this needs the private key (PKCS#8 PEM)");
  if (!text.includes("-----BEGIN PRIVATE KEY-----"))
    throw badKey(path, "not an unencrypted PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----)");
  let k: KeyObject;
  try {
    k = createPrivateKey({ key: text, format: "pem" });
  } catch {
    throw badKey(path, "the PKCS#8 PEM does not decode");
  }
  return keyPairFromSeed(jwkBytes(k, "d", path));
}

/**
 * readPrincipal returns the did:key a trust argument names: a did:key itself, or a key file (SPKI
 * PEM public key, PKCS#8 PEM private key, or the deprecated JSON form) whose did:key is meant.
 */
export function readPrincipal(v: string, option = "--trust"): string {
  if (v.startsWith("did:")) {
    const ok: boolean = isDidKey(v);
    if (!ok)
      throw new HostError("BadDidKey", `${option} ${v.slice(0, 80)} is not an Ed25519 did:key`, {
        detail: { input: v.slice(0, 80) },
      });
    return v;
  }
  const text = keyText(v);
  if (!text.includes("-----BEGIN PUBLIC KEY-----")) return readKey(v).did;
  let k: KeyObject;
  try {
    k = createPublicKey({ key: text, format: "pem" });
  } catch {
    throw badKey(v, "the SPKI PEM public key does not decode");
  }
  try {
    return didKeyFromPublicKey(jwkBytes(k, "x", v));
  } catch (e) {
    if (e instanceof HostError) throw e;
    throw badKey(v, "the public key is refused as a did:key (sandbox-attest §2.4)");
  }
}
