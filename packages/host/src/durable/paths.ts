// Where a durable run's live, host-local state lives: the run's lock, its info file (the workspace
// of its last sandbox), and its supervisor's control socket. The lock and info sit in the store's
// `live/` folder; the socket in a short runtime directory (a unix socket path has at most 107
// bytes), named by the store and the run, so two stores on one host never share one.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { digestBytes, parseDigest, toHex, utf8, type Digest, type KeyPair } from "@sbx/wire";
import { FileStore, writeFileDurably } from "../store/index.ts";
import { namesRun, resolveRun, runStoreDir } from "../stores/index.ts";
import { readKey, writeNewKey } from "../keys.ts";

/** The live paths of one run in one store. */
export interface RunPaths {
  readonly lock: string;
  readonly info: string;
  readonly socket: string;
  /** The supervisor's open interval (@sbx/host/durable OpenInterval), while one is open. */
  readonly interval: string;
}

function runtimeDir(): string {
  const given = process.env.SBX_RUNTIME_DIR;
  const dir =
    given !== undefined && given !== ""
      ? given
      : process.getuid?.() === 0
        ? "/run/sbx"
        : join(tmpdir(), `sbx-${String(process.getuid?.() ?? 0)}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** runPaths returns where run `id` of the store at `storeRoot` keeps its live state. */
export function runPaths(storeRoot: string, id: Digest): RunPaths {
  const hex = toHex(parseDigest(id));
  const live = join(storeRoot, "live");
  mkdirSync(live, { recursive: true, mode: 0o700 });
  const storeTag = digestBytes(utf8(storeRoot)).slice("blake3:".length, "blake3:".length + 12);
  return {
    lock: join(live, `${hex}.lock`),
    info: join(live, `${hex}.json`),
    interval: join(live, `${hex}.interval.json`),
    socket: join(runtimeDir(), `${storeTag}-${hex.slice(0, 24)}.sock`),
  };
}

/** The key a run signs with on this host: its file (an absolute path) and its did:key. */
export interface RunKeyRef {
  readonly path: string;
  readonly did: string;
}

/** What the info file says about the run on this host: its last sandbox's workspace, its key. */
export interface RunInfo {
  readonly workspace: string;
  /** The key the run was started with here, or the one a later `--key` named (runkey.ts). */
  readonly key?: RunKeyRef;
}

/** writeInfo records the run's workspace on this host (durably: a later command may need it). */
export function writeInfo(p: RunPaths, info: RunInfo): void {
  writeFileDurably(p.info, JSON.stringify(info) + "\n");
}

/** readInfo returns the run's info on this host, or null when it has none. */
export function readInfo(p: RunPaths): RunInfo | null {
  if (!existsSync(p.info)) return null;
  try {
    const v = JSON.parse(readFileSync(p.info, "utf8")) as { workspace?: unknown; key?: unknown };
    if (typeof v.workspace !== "string") return null;
    const k = v.key as { path?: unknown; did?: unknown } | undefined;
    const key =
      typeof k?.path === "string" && typeof k.did === "string" ? { path: k.path, did: k.did } : null;
    return { workspace: v.workspace, ...(key !== null ? { key } : {}) };
  } catch {
    return null;
  }
}

/** defaultKeyPath is where the store's own host key is kept: host-key.pem beside its folders. */
export function defaultKeyPath(storeRoot: string): string {
  return join(storeRoot, "host-key.pem");
}

/**
 * hostKeyOf reads `--key FILE`, or else the store's own host key (defaultKeyPath, mode 0600),
 * made only now that no key was given, and announced through `say` when it is made.
 */
export function hostKeyOf(
  storeRoot: string,
  keyPath: string | undefined,
  say: (line: string) => void = () => undefined,
): KeyPair {
  if (keyPath !== undefined) return readKey(keyPath);
  const path = defaultKeyPath(storeRoot);
  if (existsSync(path)) return readKey(path);
  mkdirSync(dirname(path), { recursive: true });
  const kp = writeNewKey(path, join(storeRoot, "host-key.pub.pem"));
  say(`made this store's host key ${path} (${kp.did}): it signs here whenever no --key is given`);
  return kp;
}

/**
 * runRecordPath: a record file as given, or, for a run (its id or a unique prefix, namesRun), its
 * file in the run store, found by the rule of `sbx show` (resolveRun: `RunNotFound`, `RunAmbiguous`).
 */
export function runRecordPath(arg: string, storeGiven: string | undefined): string {
  if (!namesRun(arg)) return arg;
  const store = FileStore.open(runStoreDir(storeGiven), { readOnly: true });
  return store.recordPath(resolveRun(store, arg));
}
