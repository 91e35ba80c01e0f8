// Key files: an Ed25519 seed with its did:key, written with mode 0600.
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { fromHex, generateKeyPair, keyPairFromSeed, toHex, type KeyPair } from "@sbx/wire";
import { UsageError } from "./command.ts";

/** The on-disk form of a key. */
interface KeyFile {
  readonly kty: "Ed25519";
  readonly seed: string;
  readonly did: string;
}

/** writeNewKey makes a random key and writes it to `path` with mode 0600; refuses to overwrite. */
export function writeNewKey(path: string, force = false): KeyPair {
  if (existsSync(path) && !force) throw new UsageError(`${path} exists; pass --force to overwrite`);
  const kp = generateKeyPair();
  const file: KeyFile = { kty: "Ed25519", seed: toHex(kp.seed), did: kp.did };
  writeFileSync(path, JSON.stringify(file, null, 2) + "\n", { mode: 0o600, flag: force ? "w" : "wx" });
  return kp;
}

/** readKey loads a key file and checks that its seed gives its did:key. */
export function readKey(path: string): KeyPair {
  let f: Partial<KeyFile>;
  try {
    f = JSON.parse(readFileSync(path, "utf8")) as Partial<KeyFile>;
  } catch (e) {
    throw new UsageError(`cannot read key file ${path}: ${(e as Error).message}`);
  }
  if (f.kty !== "Ed25519" || typeof f.seed !== "string" || !/^[0-9a-f]{64}$/.test(f.seed))
    throw new UsageError(`${path} is not an Ed25519 key file`);
  const kp = keyPairFromSeed(fromHex(f.seed));
  if (f.did !== kp.did) throw new UsageError(`${path}: did ${String(f.did)} does not match its seed`);
  return kp;
}
