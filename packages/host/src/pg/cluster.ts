// A throwaway PostgreSQL cluster for tests, benches and local trials: initdb in a fresh temporary
// folder, the server on a loopback port and a unix socket in that folder, one database, and a stop
// that removes it all. PostgreSQL refuses to run as root, so as root the cluster belongs to the
// `postgres` system user (Debian's package creates it) and every server command runs as that user.
// Never used by a store: a store is given a connection string and nothing else.
import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HostError } from "../errors.ts";

/** A running throwaway cluster. */
export interface TestCluster {
  /** postgresql://sbx@127.0.0.1:PORT/sbx — the connection string of its database. */
  readonly url: string;
  readonly port: number;
  /** The folder holding data/, the socket and the server log. */
  readonly dir: string;
}

const BIN_DIRS = ["/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin"];

/** pgBin finds a PostgreSQL server program; `StoreUnusable` naming the package to install when absent. */
export function pgBin(name: string): string {
  for (const d of BIN_DIRS) if (existsSync(join(d, name))) return join(d, name);
  const r = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
  if (r.status === 0 && r.stdout.trim() !== "") return r.stdout.trim();
  throw new HostError(
    "StoreUnusable",
    `${name} not found: install PostgreSQL (apt-get install -y postgresql) to use a PostgreSQL store`,
  );
}

function asRoot(): boolean {
  return process.getuid?.() === 0;
}

/** runPg runs a server program (as `postgres` when we are root); `StoreUnusable` with its output on failure. */
function runPg(name: string, args: readonly string[], dir: string): string {
  const bin = pgBin(name);
  const argv = asRoot() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  const r = spawnSync(argv[0] as string, argv[1] as string[], {
    cwd: dir,
    encoding: "utf8",
    timeout: 120_000,
  });
  if (r.status !== 0)
    throw new HostError(
      "StoreUnusable",
      `${name} ${args.join(" ")} failed (${r.error?.message ?? `status ${String(r.status)}`}): ${r.stderr.trim()}`,
    );
  return r.stdout;
}

/** freePort asks the kernel for a loopback port no one listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => {
        if (a !== null && typeof a === "object") resolve(a.port);
        else reject(new Error("no port"));
      });
    });
  });
}

function pgCtl(dir: string, ...args: string[]): string {
  return runPg(
    "pg_ctl",
    ["-D", join(dir, "data"), "-l", join(dir, "server.log"), "-w", "-t", "60", ...args],
    dir,
  );
}

/**
 * startCluster makes a cluster in a new temporary folder (under `parent`, default the OS temp
 * folder), starts it on a free loopback port with fsync on, and creates database `sbx` owned by the
 * superuser `sbx` (trust authentication, loopback and socket only). `StoreUnusable` when PostgreSQL
 * is not installed or does not start.
 */
export async function startCluster(parent: string = tmpdir()): Promise<TestCluster> {
  const dir = mkdtempSync(join(parent, "sbx-pg-"));
  const port = await freePort();
  if (asRoot()) chownSync(dir, uidOf("postgres"), gidOf("postgres"));
  runPg("initdb", ["-D", join(dir, "data"), "-U", "sbx", "-A", "trust", "-E", "UTF8", "--no-sync"], dir);
  writeFileSync(
    join(dir, "data", "postgresql.auto.conf"),
    [
      `port = ${String(port)}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      "fsync = on",
      "max_connections = 200",
      "",
    ].join("\n"),
  );
  pgCtl(dir, "start");
  const cluster = { url: `postgresql://sbx@127.0.0.1:${String(port)}/sbx`, port, dir };
  runPg("createdb", ["-h", dir, "-p", String(port), "-U", "sbx", "sbx"], dir);
  return cluster;
}

/** restartCluster stops the server (`immediate`: as a crash would, no checkpoint) and starts it again. */
export function restartCluster(c: TestCluster, mode: "fast" | "immediate" = "immediate"): void {
  pgCtl(c.dir, "stop", "-m", mode);
  pgCtl(c.dir, "start");
}

/** restartClusterAsync is restartCluster without blocking this process (writers keep running meanwhile). */
export function restartClusterAsync(c: TestCluster, mode: "fast" | "immediate" = "immediate"): Promise<void> {
  const bin = pgBin("pg_ctl");
  const args = [
    "-D",
    join(c.dir, "data"),
    "-l",
    join(c.dir, "server.log"),
    "-w",
    "-t",
    "60",
    "-m",
    mode,
    "restart",
  ];
  const [cmd, argv] = asRoot() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, argv, { cwd: c.dir, stdio: "ignore" });
    p.on("error", reject);
    p.on("close", (code) => {
      if (code === 0) resolve();
      else reject(new HostError("StoreUnusable", `pg_ctl restart exited ${String(code)}`));
    });
  });
}

/** stopServer stops the server only (the data stays): for tests of an unreachable store. */
export function stopServer(c: TestCluster): void {
  pgCtl(c.dir, "stop", "-m", "fast");
}

/** startServer starts a stopped cluster's server again. */
export function startServer(c: TestCluster): void {
  pgCtl(c.dir, "start");
}

/** stopCluster stops the server and removes the folder; a server already stopped is fine. */
export function stopCluster(c: TestCluster): void {
  try {
    pgCtl(c.dir, "stop", "-m", "fast");
  } catch {
    /* already stopped */
  }
  rmSync(c.dir, { recursive: true, force: true });
}

function idOf(flag: "-u" | "-g", user: string): number {
  const r = spawnSync("id", [flag, user], { encoding: "utf8" });
  const n = Number(r.stdout.trim());
  if (r.status !== 0 || !Number.isInteger(n))
    throw new HostError(
      "StoreUnusable",
      `no user ${user}: install PostgreSQL (apt-get install -y postgresql)`,
    );
  return n;
}
function uidOf(user: string): number {
  return idOf("-u", user);
}
function gidOf(user: string): number {
  return idOf("-g", user);
}
