// The run store the lifecycle commands share (sbx run, suspend, resume, close, runs, show, export,
// import): `--store DIR`, else `SBX_STORE`, else `$XDG_DATA_HOME/sbx`, else `~/.local/share/sbx`.
// A postgres:// (or postgresql://) connection string in `--store` or `SBX_STORE` selects the
// PostgreSQL store shared by many hosts (openStore); a path selects the file store.
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { FileStore } from "@sbx/host/store";
import { isPgUrl, PgStore } from "@sbx/host/pg";
import { CliError } from "./errors.ts";

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
    throw new CliError("Usage", "the store is a PostgreSQL connection string, not a directory");
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
