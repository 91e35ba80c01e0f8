// The run store the lifecycle commands share (sbx run, suspend, resume, close, runs, show, export,
// import): `--store DIR`, else `SBX_STORE`, else `$XDG_DATA_HOME/sbx`, else `~/.local/share/sbx`.
// A postgres:// (or postgresql://) connection string in `--store` or `SBX_STORE` selects the
// PostgreSQL store shared by many hosts (openStore); a path selects the file store.
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { FileStore } from "../store/index.ts";
import { isPgUrl, PgStore, SharedRunStore } from "../pg/index.ts";
import { restoreSnapshot, snapshotDir, type SnapshotResult } from "../snapshot/index.ts";
import type { Digest } from "@sbx/wire";
import { HostError } from "../errors.ts";

/** runStoreChoice is the raw selection: the flag, else the environment, else null (the XDG default). */
function runStoreChoice(given: string | undefined, env: NodeJS.ProcessEnv): string | null {
  if (given !== undefined && given !== "") return given;
  const fromEnv = env["SBX_STORE"];
  return fromEnv !== undefined && fromEnv !== "" ? fromEnv : null;
}

/** runStoreUrl returns the PostgreSQL connection string selected, or null when a directory is. */
export function runStoreUrl(given: string | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  const c = runStoreChoice(given, env);
  return c !== null && isPgUrl(c) ? c : null;
}

/** runStoreDir picks the store directory from the flag, the environment, then the XDG default. */
export function runStoreDir(given: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const c = runStoreChoice(given, env);
  if (c !== null && isPgUrl(c))
    throw new HostError("StoreUnusable", "the store is a PostgreSQL connection string, not a directory");
  if (c !== null) return resolve(c);
  const xdg = env["XDG_DATA_HOME"];
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), ".local", "share");
  return join(base, "sbx");
}

/** openRunStore opens the file run store, creating it on first use when `create` is set. */
export function openRunStore(given: string | undefined, create: boolean): FileStore {
  return FileStore.open(runStoreDir(given), { create });
}

/**
 * openStore opens the selected store: PostgreSQL for a connection string (its schema must be
 * initialised: `sbx store init`), else the file store (created on first use when `create`).
 * Close it when done (a no-op for the file store).
 */
export async function openStore(
  given: string | undefined,
  create: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<FileStore | PgStore> {
  const url = runStoreUrl(given, env);
  if (url !== null) return PgStore.open(url);
  return FileStore.open(runStoreDir(given, env), { create });
}

/** closeStore releases a store opened by openStore. */
export async function closeStore(s: FileStore | PgStore): Promise<void> {
  if (s instanceof PgStore) await s.close();
}

// ---- the lifecycle commands on either store (issue 18: many hosts, one PostgreSQL store)

/** The run store a lifecycle command works on: the file store, or the PostgreSQL store shared by many hosts. */
export type RunStore = FileStore | SharedRunStore;

/**
 * hostLocalDir is where a host keeps its own state when the run store is PostgreSQL (run locks,
 * supervisor state, host-key.pem, the staging store of snapshots): `SBX_LOCAL_DIR`, else the
 * default file-store folder ($XDG_DATA_HOME/sbx or ~/.local/share/sbx).
 */
export function hostLocalDir(env: NodeJS.ProcessEnv = process.env): string {
  const given = env["SBX_LOCAL_DIR"];
  if (given !== undefined && given !== "") return resolve(given);
  return runStoreDir(undefined, { ...env, SBX_STORE: "" });
}

/**
 * openAnyRunStore opens the selected run store for a lifecycle command: the PostgreSQL store (its
 * schema initialised by `sbx store init`) with this host's local state under hostLocalDir, else the
 * file store (created on first use when `create`). The PostgreSQL store's idle connections do not
 * keep the process alive.
 */
export async function openAnyRunStore(
  given: string | undefined,
  create: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunStore> {
  const url = runStoreUrl(given, env);
  if (url !== null) return SharedRunStore.open(url, hostLocalDir(env));
  return FileStore.open(runStoreDir(given, env), { create });
}

/** storeArgOf is the `--store` value that names `s` again (for a detached child). */
export function storeArgOf(s: RunStore): string {
  return s instanceof SharedRunStore ? s.url : s.root;
}

/**
 * snapshotRun snapshots workspace `ws` (§13.8) into the run store: into the file store, or into
 * the host's staging store and then streamed into PostgreSQL (SharedRunStore.pushTree).
 */
export async function snapshotRun(s: RunStore, ws: string): Promise<SnapshotResult> {
  if (!(s instanceof SharedRunStore)) return snapshotDir(s, ws);
  const snap = snapshotDir(s.local, ws);
  await s.pushTree(snap.fs_root);
  return snap;
}

/**
 * restoreRun restores snapshot `fsRoot` as `dest` (restoreSnapshot's checks and codes); from
 * PostgreSQL the tree is first streamed into the host's staging store, verified by address.
 */
export async function restoreRun(s: RunStore, fsRoot: Digest, dest: string): Promise<void> {
  if (s instanceof SharedRunStore) {
    await s.pullTree(fsRoot);
    restoreSnapshot(s.local, fsRoot, dest);
  } else restoreSnapshot(s, fsRoot, dest);
}

/**
 * readableRunStore is the file store `sbx export` (commands/sbx/archive.ts) reads a run from: the
 * file store itself, or, for PostgreSQL, the host's mirror of it holding the runs named by `ref` (a
 * run id or a unique prefix; every run when null), each copied from the database with every object
 * its verification asks for (SharedRunStore.mirrorRun). `sbx runs` and `sbx show`
 * (commands/sbx/runs.ts) call it only for a file store, which it returns as it is: on PostgreSQL
 * they and `sbx verify RUN` read the database directly (verifyPgRun, host/src/pg/runview.ts), and so
 * does `sbx report RUN` (report/pgcollect.ts). Call done() after.
 */
export async function readableRunStore(
  given: string | undefined,
  ref: string | null,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ store: FileStore; done: () => Promise<void> }> {
  const s = await openAnyRunStore(given, false, env);
  if (!(s instanceof SharedRunStore)) return { store: s, done: () => Promise.resolve() };
  try {
    let ids = await s.recordIds();
    if (ref !== null) {
      const hex = ref.startsWith("blake3:") ? ref.slice(7) : ref;
      ids = ids.filter((id) => id.startsWith(`blake3:${hex}`));
    }
    for (const id of ids) await s.mirrorRun(id);
    return { store: s.local, done: () => s.close() };
  } catch (e) {
    await s.close();
    throw e;
  }
}
