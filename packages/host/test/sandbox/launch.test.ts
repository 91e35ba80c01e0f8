// §5.1 The native launcher (native/launch.c): it refuses to run a sandbox as host root, fails closed
// (exit 125, bwrap never started) on anything it cannot do, and what it hands to bwrap holds the
// sandbox's uid and gid only, no supplementary group and no capability in any set.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LAUNCH_PATH, startSandbox, DEFAULT_HOST_UID } from "../../src/sandbox/index.ts";

const launch = (args: string[]) =>
  spawnSync(LAUNCH_PATH, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

test("the launcher refuses uid 0, bad arguments, and a cgroup it cannot join (exit 125, nothing run)", () => {
  const tmp = mkdtempSync(join(tmpdir(), "sbx-launch-"));
  try {
    const tail = ["/nonexistent-seccomp", tmp, tmp, "", "", "", "0", "--", "/bin/echo", "RAN"];
    for (const args of [
      ["0", "0", ...tail],
      ["-5", "0", ...tail],
      ["65534", "1", join(tmp, "no-such-cgroup"), ...tail],
      ["65534", "0", ...tail.slice(0, 7), "/bin/echo", "RAN"],
      // A seccomp program that cannot be opened.
      ["65534", "0", ...tail],
    ]) {
      const r = launch(args);
      assert.equal(r.status, 125, `${args.join(" ")}: ${r.stderr}`);
      assert.doesNotMatch(r.stdout, /RAN/);
      assert.match(r.stderr, /^sbx-launch: /);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

/** status fields of a process, from /proc/PID/status. */
function status(pid: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of readFileSync(`/proc/${String(pid)}/status`, "utf8").split("\n")) {
    const i = l.indexOf(":");
    if (i > 0) out[l.slice(0, i)] = l.slice(i + 1).trim();
  }
  return out;
}

/**
 * The targets of a process's open descriptors, read from /proc; a descriptor closed between the
 * listing and its readlink is left out (it is no longer held).
 */
function fdTargets(pid: number): string[] {
  const out: string[] = [];
  for (const n of readdirSync(`/proc/${String(pid)}/fd`))
    try {
      out.push(readlinkSync(`/proc/${String(pid)}/fd/${n}`));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  return out;
}

/**
 * settledMonitor resolves with bwrap's descriptors once its setup has provably ended in the outer
 * process. bwrap writes the `child-pid` status line (what resolves `unitPid`) before its monitor
 * closes every descriptor but the status and event ones (monitor_child's fdwalk), and creates its
 * signalfd right after that close: a signalfd among its descriptors means the close is done.
 * Rejects after 10 s without one.
 */
async function settledMonitor(pid: number): Promise<string[]> {
  const until = Date.now() + 10_000;
  for (;;) {
    const fds = fdTargets(pid);
    if (fds.includes("anon_inode:[signalfd]")) return fds;
    if (Date.now() > until) throw new Error(`bwrap made no signalfd: ${JSON.stringify(fds)}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test("bwrap runs as the sandbox's host uid with no group and no capability in any set", async () => {
  const ws = mkdtempSync(join(tmpdir(), "sbx-launch-ws-"));
  try {
    // The unit lists its own descriptors (ls adds 3, the folder it reads), then waits for stdin to end.
    const sb = startSandbox(
      ["/bin/sh", "-c", "ls /proc/self/fd | tr '\\n' ' '; echo; cat >/dev/null"],
      { workspace: ws },
      "pipe",
    );
    let out = "";
    const running = new Promise<void>((resolve) =>
      sb.child.stdout?.on("data", (b: Buffer) => {
        out += b.toString();
        if (out.includes("\n")) resolve();
      }),
    );
    await sb.unitPid;
    const pid = sb.child.pid ?? 0;
    assert.equal(readlinkSync(`/proc/${String(pid)}/exe`), "/usr/bin/bwrap");
    const s = status(pid);
    const id = String(DEFAULT_HOST_UID);
    assert.deepEqual(s.Uid?.split(/\s+/), [id, id, id, id]);
    assert.deepEqual(s.Gid?.split(/\s+/), [id, id, id, id]);
    assert.equal(s.Groups, "");
    for (const k of ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"])
      assert.equal(s[k], "0000000000000000", k);
    // The unit runs with stdio only: nothing the launcher handed bwrap for setup reached it.
    await running;
    assert.equal(out.trim(), "0 1 2 3", out);
    // And once bwrap's setup has ended, it holds only stdio and its own descriptors: nothing the
    // host process or the launcher held.
    const fds = await settledMonitor(pid);
    assert.ok(!fds.some((t) => t.startsWith("/") && !t.startsWith("/dev/null")), JSON.stringify(fds));
    sb.child.stdin?.end();
    const exit = await sb.done;
    assert.equal(exit.code, 0);
    await sb.release();
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});
