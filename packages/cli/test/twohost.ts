// Two hosts in two network namespaces sharing one PostgreSQL store (issue 18), for the faults test
// (faults/twohost.faults.ts) and `scripts/demo-twohost.sh`. As root:
//   - two namespaces sbx2h<tag>a and sbx2h<tag>b, each joined to the root namespace by a veth pair
//     with private addresses 10.N.1.2 ↔ 10.N.1.1 and 10.N.2.2 ↔ 10.N.2.1 (N chosen unused);
//   - a throwaway PostgreSQL cluster in the root namespace listening on 10.N.1.1 and 10.N.2.1 (and
//     loopback for its own administration), accepting user sbx from 10.N.0.0/16 only with a
//     password (scram-sha-256);
//   - each host its own SBX_LOCAL_DIR (its host key, locks, snapshot staging), its commands run in its
//     namespace with nsenter (only the network namespace changes: cgroups stay visible).
// tearDown removes the namespaces, the links and the cluster, step by step, whatever state setUp
// reached; leftovers() lists anything of a tag still there.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { restartCluster, startCluster, stopCluster, type TestCluster } from "@sbx/host/pg";
import { sql } from "../../host/test/pg/pgtest.ts";
import { SBX } from "./lifecycle-helpers.ts";
import { lastTally, lineWorker, tsxArgv } from "../../host/test/support/worker.ts";

/** One host: its namespace, the store URL as seen from it, its local folder. */
export interface Host {
  readonly name: string;
  readonly ns: string;
  readonly url: string;
  readonly local: string;
}

/** The two hosts and what tearDown removes. */
export interface TwoHosts {
  readonly tag: string;
  readonly dir: string;
  net: number;
  cluster: TestCluster | null;
  a: Host;
  b: Host;
}

function sh(cmd: string, args: readonly string[], allowFail = false): string {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  if (r.status !== 0 && !allowFail)
    throw new Error(`${cmd} ${args.join(" ")}: ${r.error?.message ?? r.stderr.trim()}`);
  return r.stdout;
}

const nsName = (tag: string, h: "a" | "b") => `sbx2h${tag}${h}`;
const outer = (tag: string, h: "a" | "b") => `s2h${tag}${h}`;
const inner = (tag: string, h: "a" | "b") => `s2h${tag}${h}p`;

function unusedNet(): number {
  const used = sh("ip", ["-4", "-o", "addr"]);
  for (let i = 0; i < 200; i++) {
    const n = 100 + ((randomBytes(1)[0] ?? 0) % 100);
    if (!used.includes(` 10.${String(n)}.`)) return n;
  }
  throw new Error("no free 10.N.0.0/16 for the two-host test");
}

/** newTwoHosts names the hosts (nothing made yet). */
export function newTwoHosts(parent = "/var/tmp"): TwoHosts {
  const tag = randomBytes(3).toString("hex");
  const dir = mkdtempSync(join(parent, "sbx-twohost-"));
  const host = (h: "a" | "b"): Host => ({
    name: h === "a" ? "A" : "B",
    ns: nsName(tag, h),
    url: "",
    local: join(dir, `host${h.toUpperCase()}`),
  });
  return { tag, dir, net: 0, cluster: null, a: host("a"), b: host("b") };
}

/** setUp makes the namespaces, the veths and the cluster (see the file comment). */
export async function setUp(t: TwoHosts, say: (l: string) => void = () => undefined): Promise<void> {
  t.net = unusedNet();
  const N = String(t.net);
  for (const [h, i] of [
    ["a", 1],
    ["b", 2],
  ] as const) {
    const ns = nsName(t.tag, h);
    sh("ip", ["netns", "add", ns]);
    sh("ip", ["link", "add", outer(t.tag, h), "type", "veth", "peer", "name", inner(t.tag, h)]);
    sh("ip", ["link", "set", inner(t.tag, h), "netns", ns]);
    sh("ip", ["addr", "add", `10.${N}.${String(i)}.1/24`, "dev", outer(t.tag, h)]);
    sh("ip", ["link", "set", outer(t.tag, h), "up"]);
    const inNs = (...a: string[]) => sh("ip", ["netns", "exec", ns, "ip", ...a]);
    inNs("addr", "add", `10.${N}.${String(i)}.2/24`, "dev", inner(t.tag, h));
    inNs("link", "set", inner(t.tag, h), "up");
    inNs("link", "set", "lo", "up");
    say(
      `namespace ${ns}: ${inner(t.tag, h)} 10.${N}.${String(i)}.2/24 ↔ ${outer(t.tag, h)} 10.${N}.${String(i)}.1`,
    );
  }
  const c = await startCluster();
  t.cluster = c;
  const password = randomBytes(12).toString("hex");
  await sql(c.url, `ALTER ROLE sbx PASSWORD '${password}'`);
  const data = join(c.dir, "data");
  writeFileSync(
    join(data, "postgresql.auto.conf"),
    readFileSync(join(data, "postgresql.auto.conf"), "utf8") +
      `listen_addresses = '127.0.0.1,10.${N}.1.1,10.${N}.2.1'\npassword_encryption = 'scram-sha-256'\n`,
  );
  const hba = join(data, "pg_hba.conf");
  writeFileSync(hba, `host sbx sbx 10.${N}.0.0/16 scram-sha-256\n` + readFileSync(hba, "utf8"));
  restartCluster(c, "fast");
  const url = (i: number) => `postgresql://sbx:${password}@10.${N}.${String(i)}.1:${String(c.port)}/sbx`;
  t.a = { ...t.a, url: url(1) };
  t.b = { ...t.b, url: url(2) };
  for (const h of [t.a, t.b]) mkdirSync(h.local, { recursive: true });
  say(`PostgreSQL on 10.${N}.1.1 and 10.${N}.2.1 port ${String(c.port)} (scram-sha-256 from 10.${N}.0.0/16)`);
}

/** tearDown removes whatever setUp made, each step on its own (a failure of one does not stop the rest). */
export function tearDown(t: TwoHosts): void {
  for (const h of ["a", "b"] as const) {
    sh("ip", ["netns", "del", nsName(t.tag, h)], true);
    sh("ip", ["link", "del", outer(t.tag, h)], true);
  }
  if (t.cluster !== null) {
    try {
      stopCluster(t.cluster);
    } catch {
      /* removed below */
    }
    t.cluster = null;
  }
  rmSync(t.dir, { recursive: true, force: true });
}

/**
 * tearDownOnSignal tears the hosts down and exits when the process is told to stop (SIGINT,
 * SIGTERM: Ctrl-C, a test runner's timeout), where no finally block would run. Returns the unhook.
 */
export function tearDownOnSignal(t: TwoHosts): () => void {
  const stop = (sig: NodeJS.Signals) => {
    tearDown(t);
    process.exit(sig === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return () => {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  };
}

/** leftovers lists the namespaces and links of `tag` still present. */
export function leftovers(tag: string): string[] {
  const ns = sh("ip", ["netns", "list"], true)
    .split("\n")
    .filter((l) => l.includes(`sbx2h${tag}`));
  const links = sh("ip", ["-o", "link"], true)
    .split("\n")
    .filter((l) => l.includes(`s2h${tag}`));
  return [...ns, ...links];
}

/** One finished command. */
export interface Ran {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

function nsArgv(h: Host, argv: readonly string[]): string[] {
  return [`--net=/run/netns/${h.ns}`, ...argv];
}

/** sbxOn runs `sbx ARGS` on host `h`: in its namespace, its store the database, its own local folder. */
export function sbxOn(h: Host, args: readonly string[]): Promise<Ran> {
  return new Promise((resolve) => {
    const p = spawn("nsenter", nsArgv(h, [process.execPath, SBX, ...args]), {
      env: { ...process.env, SBX_STORE: h.url, SBX_LOCAL_DIR: h.local },
    });
    let out = "";
    let err = "";
    p.stdout.on("data", (b: Buffer) => (out += b.toString()));
    p.stderr.on("data", (b: Buffer) => (err += b.toString()));
    p.on("close", (code) => resolve({ code, out, err }));
  });
}

/** A race worker on a host: `ready` once poised, `done` with its tally by outcome code. */
export interface NsWorker {
  readonly ready: Promise<void>;
  readonly done: Promise<Record<string, number>>;
}

/** workerOn starts a tsx worker script (ready / go file / one JSON tally line) in host `h`'s namespace. */
export function workerOn(
  h: Host,
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): NsWorker {
  const argv = ["nsenter", ...nsArgv(h, tsxArgv(script, args))];
  const w = lineWorker<Record<string, number>>(argv, `worker on ${h.name}`, { ...process.env, ...env });
  return { ready: w.ready, done: w.done.then(lastTally) };
}
