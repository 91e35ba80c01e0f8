// §5.1 item 4 The bubblewrap command line as a whole: the flags the sandbox's level depends on (no
// network share, every namespace new, no further user namespaces, a new session, every capability
// dropped, death with the parent), then the behaviour behind the parent-death rule: the sandbox's
// processes die with the process that supervises it (its launcher's parent) or with the launcher,
// and nothing else does; except a durable run's sandbox (§13.10a item 8), which outlives its
// supervisor, its processes kept in their cgroup until a later command ends them.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { bwrapArgs, DEFAULT_USER, removeCgroupDir, type BwrapPlan } from "../../src/sandbox/index.ts";
import { isMountPoint, writeBack } from "../../src/sandbox/disk.ts";

const PLAN: BwrapPlan = {
  user: DEFAULT_USER,
  workspaceFolder: "/work",
  hostname: "sbx",
  tmpBytes: 1024,
  env: { PATH: "/usr/bin", HOME: "/work" },
  argv: ["/bin/true", "x"],
  system: [
    { kind: "ro-bind", path: "/usr" },
    { kind: "symlink", path: "/bin", target: "usr/bin" },
  ],
};

test("bwrapArgs: the whole command line of a plain sandbox", () => {
  // prettier-ignore
  assert.deepEqual(bwrapArgs(PLAN), [
    "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
    "--cap-drop", "ALL", "--uid", "1000", "--gid", "1000",
    "--hostname", "sbx",
    "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
    "--ro-bind-fd", "5", "/etc",
    "--proc", "/proc", "--dev", "/dev",
    "--size", "1024", "--perms", "1777", "--tmpfs", "/tmp",
    "--size", "1024", "--perms", "1777", "--tmpfs", "/dev/shm",
    "--bind-fd", "4", "/work", "--chdir", "/work",
    "--remount-ro", "/dev", "--remount-ro", "/",
    "--clearenv", "--setenv", "HOME", "/work", "--setenv", "PATH", "/usr/bin",
    "--seccomp", "3", "--json-status-fd", "6",
    "--", "/bin/true", "x",
  ]);
});

/** The options before `--`, in every variant of a plan. */
function options(p: BwrapPlan): string[] {
  const a = bwrapArgs(p);
  return a.slice(0, a.indexOf("--"));
}

test("bwrapArgs: every variant keeps the isolation flags and adds nothing that shares or grants", () => {
  const variants: BwrapPlan[] = [
    PLAN,
    { ...PLAN, gated: true },
    { ...PLAN, workspaceReadOnly: true },
    { ...PLAN, outlivesParent: true },
    {
      ...PLAN,
      binds: [
        { inside: "/data", writable: true },
        { inside: "/ref", writable: false },
      ],
    },
  ];
  for (const p of variants) {
    const o = options(p);
    for (const f of ["--unshare-all", "--unshare-user", "--disable-userns", "--new-session"])
      assert.equal(o.filter((x) => x === f).length, 1, `${f} once`);
    const dies = o.filter((x) => x === "--die-with-parent").length;
    assert.equal(dies, p.outlivesParent === true ? 0 : 1, "--die-with-parent once, unless durable");
    assert.deepEqual(o.slice(o.indexOf("--cap-drop"), o.indexOf("--cap-drop") + 2), ["--cap-drop", "ALL"]);
    assert.equal(o.indexOf("--seccomp") >= 0 && o[o.indexOf("--seccomp") + 1], "3");
    assert.ok(o.includes("--clearenv"));
    const widening = o.filter((x) => /^--(share-|cap-add|as-pid-1|unshare-(?!all$|user$))/.test(x));
    assert.deepEqual(widening, [], "no namespace shared, no capability added");
    // Host paths appear only as the system's read-only sources; everything else comes by descriptor.
    const binds = o.flatMap((x, i) => (x === "--bind" || x === "--dev-bind" ? [o[i + 1]] : []));
    assert.deepEqual(binds, []);
  }
});

function procsOf(dirs: readonly string[]): number[] {
  return dirs.flatMap((d) =>
    existsSync(join(d, "cgroup.procs"))
      ? readFileSync(join(d, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number)
      : [],
  );
}

/** alive: the process exists and is not a zombie (one whose parent died may wait to be reaped). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Started {
  readonly dirs: string[];
  readonly unit: number;
  readonly launcher: number;
}

/** Runs `f` on a sandbox started by a separate supervisor process; cleans up whatever is left. */
async function withSupervisor(
  f: (s: Started, supervisor: number) => Promise<void>,
  outlives = false,
): Promise<void> {
  const ws = mkdtempSync(join(tmpdir(), "sbx-pdeath-ws-"));
  const helper = new URL("./parent-death-child.ts", import.meta.url).pathname;
  const sup = spawn(process.execPath, ["--import", "tsx", helper, ws, ...(outlives ? ["outlives"] : [])], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let s: Started | null = null;
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      sup.stdout.on("data", (b: Buffer) => {
        out += b.toString();
        if (out.includes("\n")) resolve(out.split("\n")[0]!);
      });
      sup.on("error", reject);
      sup.on("exit", (c) => reject(new Error(`the supervisor exited ${String(c)} before the unit started`)));
    });
    s = JSON.parse(line) as Started;
    await f(s, sup.pid!);
  } finally {
    if (sup.exitCode === null && sup.signalCode === null) sup.kill("SIGKILL");
    if (s !== null) {
      for (const pid of procsOf(s.dirs))
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone
        }
      await until("the cgroups are empty", () => procsOf(s!.dirs).length === 0);
      for (const d of [...s.dirs].reverse()) if (existsSync(d)) assert.ok(removeCgroupDir(d), `${d} removed`);
    }
    // The supervisor died before its write-back: the workspace's image is still mounted (disk.ts).
    if (isMountPoint(ws)) writeBack(ws);
    rmSync(ws, { recursive: true, force: true });
  }
}

test("the supervisor killed (SIGKILL, so none of its cleanup runs): every process of its sandbox dies, the caller lives", async () => {
  await withSupervisor(async (s, supervisor) => {
    const before = procsOf(s.dirs);
    assert.ok(before.includes(s.unit) && before.length >= 4, `unit, two sleeps, init: ${before.join(" ")}`);
    process.kill(supervisor, "SIGKILL");
    await until("every process of the sandbox has died", () => procsOf(s.dirs).length === 0);
    await until("the launcher (bwrap) has died", () => !alive(s.launcher));
  });
});

test("the launcher killed: the sandbox's processes die, its supervisor lives", async () => {
  await withSupervisor(async (s, supervisor) => {
    process.kill(s.launcher, "SIGKILL");
    await until("every process of the sandbox has died", () => procsOf(s.dirs).length === 0);
    assert.ok(alive(supervisor), "the supervisor outlives its sandbox");
  });
});

test("a durable run's sandbox (outlivesSupervisor) outlives its supervisor's SIGKILL: its processes stay in their cgroup until it is killed", async () => {
  await withSupervisor(async (s, supervisor) => {
    const before = procsOf(s.dirs);
    assert.ok(before.includes(s.unit) && before.length >= 4, `unit, two sleeps, init: ${before.join(" ")}`);
    process.kill(supervisor, "SIGKILL");
    await until("the supervisor has died", () => !alive(supervisor));
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(procsOf(s.dirs).sort(), before.sort(), "every process of the sandbox lives on");
    assert.ok(alive(s.unit) && alive(s.launcher), "the unit and bwrap outlive the supervisor");
    // Its cgroups are held: another host process's sweep of a dead maker's cgroups leaves them.
    for (const d of s.dirs) assert.ok(existsSync(join(d, "sbx-hold")), `${d} is held`);
    // withSupervisor's cleanup then kills the cgroup's processes: nothing is left behind.
  }, true);
});
