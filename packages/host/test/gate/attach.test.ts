// §5.5.5 the gate attached to a sandbox built by bubblewrap: the helper joins the sandbox's mount
// namespace once its mounts are final, marks them, and every exec in it is decided and journaled;
// memfd execs are refused there too (vm.memfd_noexec=2 in the sandbox's pid namespace).
// The sandbox's launcher says "up" when its mounts are final and waits for "go" before it execs
// the command.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { makePolicy } from "@sbx/sandbox-attest/execpolicy";
import { startGate } from "@sbx/host/gate";
import { withFixture, refusals, type Fixture } from "./fixture.ts";

let f: Fixture;
withFixture((x) => {
  f = x;
});

function firstLine(s: Readable): Promise<string> {
  return new Promise((resolve) => {
    let buf = "";
    s.on("data", (b: Buffer) => {
      buf += b.toString();
      if (buf.includes("\n")) resolve(buf.slice(0, buf.indexOf("\n")));
    });
  });
}

describe("attached to a bubblewrap sandbox", () => {
  test("every exec inside is decided and journaled", { timeout: 60_000 }, async () => {
    const memfd = `${f.python} -c "import os; fd = os.memfd_create('x'); os.write(fd, open('./denied', 'rb').read()); os.execve(fd, ['x', 'm'], {})" || echo memfd-refused`;
    const script = `rm -f m; ./denied m; echo status=$?; ./allowed; /usr/bin/true && echo true-ran; ${memfd}`;
    const launcher = 'echo up >&3; read go <&4; exec /bin/sh -c "$0"';
    // prettier-ignore
    const args = [
      "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
      "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
      "--tmpfs", "/tmp", "--bind", f.ws, f.ws, "--chdir", f.ws, "--proc", "/proc", "--dev", "/dev",
      "--info-fd", "5", "--", "/bin/sh", "-c", launcher, script,
    ];
    const bw = spawn("bwrap", args, { stdio: ["ignore", "pipe", "pipe", "pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    bw.stdout?.on("data", (b: Buffer) => out.push(b));
    const exited = new Promise<number | null>((resolve) => bw.on("close", (c) => resolve(c)));
    const fds = bw.stdio as unknown as readonly Readable[];
    let info = "";
    const infoDone = new Promise<void>((resolve) => fds[5]?.on("end", resolve));
    fds[5]?.on("data", (b: Buffer) => (info += b.toString()));
    // Without bubblewrap (Debian package bubblewrap) this fails with spawn's error, never skips.
    const failed = new Promise<never>((_, reject) => bw.on("error", reject));
    assert.equal(await Promise.race([firstLine(fds[3] as Readable), failed]), "up");
    // bubblewrap writes its info before the command runs; wait for the JSON to be whole.
    while (!info.includes("}")) await Promise.race([infoDone, new Promise((r) => setTimeout(r, 10))]);
    const pid = (JSON.parse(info) as { "child-pid": number })["child-pid"];
    const s = await startGate({
      policy: makePolicy("denylist", [], [f.deniedDigest]),
      command: [],
      attach: pid,
      loaders: f.loaders,
      env: f.env,
    });
    assert.ok(s.marked >= 3, `marked ${s.marked} mounts`);
    (bw.stdio[4] as Writable).write("go\n");
    const [code, r] = await Promise.all([exited, s.done]);
    const stdout = Buffer.concat(out).toString();
    assert.equal(code, 0, stdout);
    assert.match(stdout, /status=126/);
    assert.match(stdout, /ALLOWED-RAN/);
    assert.match(stdout, /true-ran/);
    assert.match(stdout, /memfd-refused/, "vm.memfd_noexec=2 in the sandbox's pid namespace");
    assert.ok(!stdout.includes("DENIED-RAN") && !existsSync(join(f.ws, "m")), stdout);
    assert.ok(
      refusals(r, f.deniedDigest).some((d) => d.route === "direct"),
      JSON.stringify(r.decisions),
    );
    assert.ok(
      r.decisions.some((d) => d.allowed && d.path.endsWith("/allowed")),
      JSON.stringify(r.decisions),
    );
  });
});
