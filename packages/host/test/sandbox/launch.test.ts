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

test("bwrap runs as the sandbox's host uid with no group and no capability in any set", async () => {
  const ws = mkdtempSync(join(tmpdir(), "sbx-launch-ws-"));
  try {
    const sb = startSandbox(["/bin/sh", "-c", "sleep 0.5"], { workspace: ws }, "ignore");
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
    // And only stdio and bwrap's own descriptors: nothing the host process held.
    const fds = readdirSync(`/proc/${String(pid)}/fd`).map((n) =>
      readlinkSync(`/proc/${String(pid)}/fd/${n}`),
    );
    assert.ok(!fds.some((t) => t.startsWith("/") && !t.startsWith("/dev/null")), JSON.stringify(fds));
    await sb.done;
    await sb.release();
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});
