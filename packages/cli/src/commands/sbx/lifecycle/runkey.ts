// Which key signs a durable run's intervals on this host (issue 38). A run remembers, in its info
// file (this host's local state, paths.ts), the key it was started with here; every later command
// on this host signs with that key unless `--key` names another, which is then said, naming both
// did:keys, and remembered in its place. The store's own host key is used, and made (announced),
// only for a run that remembers no key here (one started elsewhere, or before keys were remembered).
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Digest, KeyPair } from "@sbx/wire";
import { HostError, isHostError } from "@sbx/host";
import { readKey } from "@sbx/host/keys";
import { askSupervisor } from "@sbx/host/durable";
import { defaultKeyPath, hostKeyOf, readInfo, type RunKeyRef, type RunPaths } from "@sbx/host/durable";

/** A key chosen for a run, with what the info file remembers of it. */
export interface RunKey {
  readonly key: KeyPair;
  readonly ref: RunKeyRef;
}

/** startKeyOf is the key `sbx run` starts a run with: `--key FILE`, else the store's host key. */
export function startKeyOf(storeRoot: string, given: string | undefined, say: (l: string) => void): RunKey {
  const path = resolve(given ?? defaultKeyPath(storeRoot));
  const key = hostKeyOf(storeRoot, given, say);
  return { key, ref: { path, did: key.did } };
}

// The remembered key, read again: its file must still hold the same key, or nothing signs.
function rememberedKey(id: Digest, ref: RunKeyRef): KeyPair {
  let key: KeyPair;
  try {
    key = readKey(ref.path);
  } catch (e) {
    if (!isHostError(e)) throw e;
    throw new HostError(
      e.code,
      `run ${id} signs on this host with ${ref.did} from ${ref.path}, which cannot be read now (${e.message}): give --key FILE`,
      { cause: e, detail: e.detail },
    );
  }
  if (key.did !== ref.did)
    throw new HostError(
      "KeyMismatch",
      `run ${id} signs on this host with ${ref.did}, but ${ref.path} now holds ${key.did}: give --key FILE to sign with another key`,
    );
  return key;
}

/**
 * runKeyOf is the key a later command on run `id` signs with on this host: `--key FILE` when given
 * (said, naming both did:keys, when it is not the key the run remembers), else the remembered key
 * (refused when its file is gone or now holds another key), else the store's host key. Nothing is
 * remembered here: the command that starts a sandbox with the key writes it (writeInfo).
 */
export function runKeyOf(
  storeRoot: string,
  paths: RunPaths,
  id: Digest,
  given: string | undefined,
  say: (l: string) => void,
): RunKey {
  const before = readInfo(paths)?.key;
  if (given === undefined && before !== undefined) return { key: rememberedKey(id, before), ref: before };
  const chosen = startKeyOf(storeRoot, given, say);
  if (before !== undefined && before.did !== chosen.key.did)
    say(
      `run ${id} is now signed by a second key: ${chosen.key.did} (${chosen.ref.path}); its earlier intervals on this host were signed by ${before.did} (${before.path}). Trust both to verify it; later commands here use ${chosen.ref.path} unless --key names another`,
    );
  return chosen;
}

/**
 * runKeyDid is the did:key run `id` signs with on this host without reading or making a key: the
 * remembered one, else the store's host key's when it exists, else null.
 */
export function runKeyDid(storeRoot: string, paths: RunPaths): string | null {
  const ref = readInfo(paths)?.key;
  if (ref !== undefined) return ref.did;
  return existsSync(defaultKeyPath(storeRoot)) ? readKey(defaultKeyPath(storeRoot)).did : null;
}

/**
 * refuseKeyForResident refuses `--key FILE` on a resume that would thaw processes resident here
 * under another key: the thawed interval is sealed by the supervisor holding them, with the key it
 * was started with, so the key asked for could not be the one that signs (suspend with --release
 * first, then resume with the key).
 */
export async function refuseKeyForResident(paths: RunPaths, id: Digest, given: string): Promise<void> {
  const ref = readInfo(paths)?.key;
  const did = readKey(given).did;
  if (ref === undefined || ref.did === did) return;
  if ((await askSupervisor(paths.socket, { op: "status" })) === undefined) return;
  throw new HostError(
    "KeyMismatch",
    `run ${id}'s processes are resident on this host under ${ref.did}, which signs their interval when thawed, not ${did}: resume without --key, or suspend --release first`,
  );
}
