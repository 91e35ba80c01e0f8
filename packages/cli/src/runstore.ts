// The run store the lifecycle commands share (sbx run, suspend, resume, close, runs, show, export,
// import): `--store DIR`, else `SBX_STORE`, else `$XDG_DATA_HOME/sbx`, else `~/.local/share/sbx`.
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { FileStore } from "@sbx/host/store";

/** runStoreDir picks the store directory from the flag, the environment, then the XDG default. */
export function runStoreDir(given: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (given !== undefined && given !== "") return resolve(given);
  const fromEnv = env["SBX_STORE"];
  if (fromEnv !== undefined && fromEnv !== "") return resolve(fromEnv);
  const xdg = env["XDG_DATA_HOME"];
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), ".local", "share");
  return join(base, "sbx");
}

/** openRunStore opens the run store, creating it on first use when `create` is set. */
export function openRunStore(given: string | undefined, create: boolean): FileStore {
  return FileStore.open(runStoreDir(given), { create });
}
