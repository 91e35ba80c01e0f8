// §15.3 A pool item's parked sandbox is the sandbox `sbx run` makes for the same manifest: the
// launcher argv the keeper really started (read back from /proc) equals, path for path, the one
// startSandbox really spawned for a run of the same options with the same command and the hand-off
// folder bound at the same place. Only the host's own paths differ (fresh cgroup names, per-item
// copies of /etc and the seccomp program, the workspace), and those are checked to hold the same
// limits, the same /etc and the same seccomp bytes.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { after, test } from "node:test";
import { addressOf, testKey } from "@sbx/wire";
import {
  CLAIM_DIR,
  createPoolDir,
  destroyPoolDir,
  poolPaths,
  readParked,
  type ParkOptions,
} from "@sbx/host/pool";
import { startSandbox } from "../../src/sandbox/sandbox.ts";
import { LAUNCH_PATH } from "../../src/sandbox/bwrap.ts";

const key = testKey("host");
const dir = mkdtempSync(join(tmpdir(), "sbx-same-"));
const scratch = mkdtempSync(join(tmpdir(), "sbx-same-run-"));
after(async () => {
  if (existsSync(poolPaths(dir).descriptor)) await destroyPoolDir(dir, key);
  rmSync(dir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

/** A manifest's sandbox with nothing left at its default. */
const spec: ParkOptions = {
  user: "builder",
  env: { LANG: "C.UTF-8", MODE: "ci" },
  workspaceFolder: "/src",
  limits: { memoryBytes: 96 << 20, pids: 48, cpuMillis: 700 },
  tmpBytes: 8 << 20,
  workspaceBytes: 5 << 20,
};

const LIMIT_FILES = [
  "memory.max",
  "memory.swap.max",
  "pids.max",
  "cpu.max",
  "memory.limit_in_bytes",
  "memory.memsw.limit_in_bytes",
  "cpu.cfs_period_us",
  "cpu.cfs_quota_us",
];

/** What one sandbox's launcher argv names, by its place in launcherArgv's layout. */
function layout(argv: readonly string[]) {
  assert.equal(argv[0], LAUNCH_PATH, "the launcher is the first word");
  const n = Number(argv[2]);
  const cgroups = argv.slice(3, 3 + n);
  const [seccomp, workspace, etc, mountpoint] = argv.slice(3 + n, 7 + n);
  const nb = Number(argv[9 + n]);
  const binds = argv.slice(10 + n, 10 + n + nb);
  return { cgroups, seccomp: seccomp ?? "", workspace: workspace ?? "", etc: etc ?? "", mountpoint, binds };
}

/** The argv with each host path the two sandboxes may differ in put as its role. */
function roles(argv: readonly string[]): string[] {
  const l = layout(argv);
  const named = new Map<string, string>([
    [l.seccomp, "<seccomp>"],
    [l.workspace, "<workspace>"],
    [l.etc, "<etc>"],
  ]);
  if (l.mountpoint) named.set(l.mountpoint, "<mountpoint>");
  l.cgroups.forEach((d, i) => named.set(d, `${dirname(d)}/<run cgroup ${String(i)}>`));
  l.binds.forEach((b, i) => named.set(b, `<bind ${String(i)}>`));
  return argv.map((a) => named.get(a) ?? a);
}

function dirFiles(d: string): Record<string, string> {
  return Object.fromEntries(readdirSync(d).map((f) => [f, readFileSync(join(d, f), "utf8")]));
}

function limitFiles(cg: string): Record<string, string> {
  return Object.fromEntries(
    LIMIT_FILES.filter((f) => existsSync(join(cg, f))).map((f) => [f, readFileSync(join(cg, f), "utf8")]),
  );
}

test("a pool item's parked sandbox is the sandbox a run of the same manifest gets", async () => {
  await createPoolDir(dir, {
    name: "same",
    manifest: addressOf({ pool: "same" }),
    size: 1,
    key,
    parked: spec,
  });
  const info = readParked(poolPaths(dir).item("item-0000"));
  assert.ok(info !== null);
  // The keeper is `/bin/sh -c '"$@" & wait $!' sbx-pool-keeper LAUNCHER-ARGV…`: what it started.
  const keeper = readFileSync(`/proc/${String(info.keeper.pid)}/cmdline`, "utf8")
    .split("\0")
    .slice(0, -1);
  const parked = keeper.slice(keeper.indexOf("sbx-pool-keeper") + 1);
  const command = parked.slice(parked.lastIndexOf("--") + 1);
  assert.equal(command[0], "/bin/sh", "the waiter is the parked sandbox's command");

  // A run of the same manifest, given the same command and a hand-off folder bound at CLAIM_DIR.
  const ctl = mkdtempSync(join(scratch, "ctl-"));
  const workspace = mkdtempSync(join(scratch, "ws-"));
  const sb = startSandbox(
    command,
    { ...spec, workspace, binds: [{ host: ctl, inside: CLAIM_DIR, writable: false }] },
    "ignore",
  );
  try {
    const run = sb.child.spawnargs;
    assert.deepEqual(
      roles(parked),
      roles(run),
      "the same launcher, cgroups, mounts, bwrap arguments and command",
    );
    const p = layout(parked);
    const r = layout(run);
    assert.deepEqual(p.binds, [join(info.system, "ctl")], "the parked one binds its hand-off folder");
    assert.deepEqual(r.binds, [ctl]);
    assert.equal(p.workspace, poolPaths(dir).workspace("item-0000"));
    assert.equal(r.workspace, workspace);
    assert.equal(p.mountpoint === "", r.mountpoint === "", "both bind the workspace the same way");
    // The host's files behind the paths that differ hold the same things.
    assert.deepEqual(dirFiles(p.etc), dirFiles(r.etc), "the same generated /etc");
    assert.ok(readFileSync(p.seccomp).equals(readFileSync(r.seccomp)), "the same seccomp program");
    assert.equal(p.cgroups.length, r.cgroups.length);
    p.cgroups.forEach((d, i) => {
      const other = r.cgroups[i] ?? "";
      assert.match(basename(d), /^sbx-run-\d+-[0-9a-f]{12}$/);
      assert.match(basename(other), /^sbx-run-\d+-[0-9a-f]{12}$/);
      assert.deepEqual(limitFiles(d), limitFiles(other), `cgroup ${String(i)} holds the same limits`);
    });
    const read = p.cgroups.flatMap((d) => Object.keys(limitFiles(d))).join(" ");
    for (const what of ["memory", "pids", "cpu"])
      assert.match(read, new RegExp(`${what}\\.`), `${what} limit read`);
    // What each states as provided differs only in the run's stated bind (the hand-off is none).
    assert.deepEqual(sb.provided.binds, [{ inside: CLAIM_DIR, writable: false }]);
    assert.deepEqual(info.provided, { ...sb.provided, binds: [] });
  } finally {
    sb.signal("SIGKILL");
    await sb.done;
    await sb.release();
  }
});
