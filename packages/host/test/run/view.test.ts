// §8.2 argv[0] resolved inside the sandbox's own view (run/view.ts): an image's rootfs, its links read
// inside it (an absolute target is the image's, never the host's), PATH from the sandbox's env, the
// workspace at its folder; a missing program is ProgramNotFound naming every path searched.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isHostError } from "../../src/errors.ts";
import { imageSystem } from "../../src/image/system.ts";
import { findInside, programInSandbox, sandboxView } from "../../src/run/index.ts";
import type { SandboxOptions } from "../../src/sandbox/sandbox.ts";

function rootfs(): string {
  const r = mkdtempSync(join(tmpdir(), "sbx-view-root-"));
  for (const d of ["usr/bin", "usr/local/bin", "opt/tools", "etc"])
    mkdirSync(join(r, d), { recursive: true });
  writeFileSync(join(r, "usr/bin/python3.11"), "#!/bin/false\nimage python\n", { mode: 0o755 });
  // An absolute link, as Debian ships them: read inside the image, it names the image's file.
  symlinkSync("/usr/bin/python3.11", join(r, "usr/bin/python3"));
  symlinkSync("usr/bin", join(r, "bin"));
  writeFileSync(join(r, "opt/tools/only-here"), "#!/bin/sh\n", { mode: 0o755 });
  writeFileSync(join(r, "usr/local/bin/not-exec"), "#!/bin/sh\n", { mode: 0o644 });
  symlinkSync("/etc/passwd", join(r, "usr/local/bin/to-host-etc"));
  symlinkSync("loop", join(r, "usr/local/bin/loop"));
  return r;
}

function sandbox(root: string, env: Record<string, string> = {}): SandboxOptions {
  const ws = mkdtempSync(join(tmpdir(), "sbx-view-ws-"));
  writeFileSync(join(ws, "job.sh"), "#!/bin/sh\n", { mode: 0o755 });
  chmodSync(ws, 0o755);
  return {
    workspace: ws,
    workspaceFolder: "/workspaces/p",
    image: imageSystem(root, "tree", "0".repeat(64)),
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", ...env },
  };
}

test("argv[0] is the image's file: links read inside the rootfs, never on the host", () => {
  const r = rootfs();
  const so = sandbox(r);
  assert.deepEqual(findInside(sandboxView(so), "python3"), { path: join(r, "usr/bin/python3.11") });
  assert.equal(programInSandbox("/bin/python3", so), join(r, "usr/bin/python3.11"));
  assert.equal(programInSandbox("./job.sh", so), join(so.workspace, "job.sh"));
  assert.equal(programInSandbox("/workspaces/p/../p/job.sh", so), join(so.workspace, "job.sh"));
  // /etc is the sandbox's own, so a link into it from the image names nothing of the host's.
  assert.equal("error" in findInside(sandboxView(so), "to-host-etc"), true);
});

test("PATH is the sandbox's (the image's and the manifest's env): a program off it is not found", () => {
  const r = rootfs();
  assert.throws(
    () => programInSandbox("only-here", sandbox(r)),
    (e) =>
      isHostError(e, "ProgramNotFound") &&
      e.message.endsWith(
        "only-here is not in the sandbox (the image's rootfs): searched /usr/local/bin/only-here, /usr/bin/only-here, /bin/only-here",
      ),
  );
  assert.equal(
    programInSandbox("only-here", sandbox(r, { PATH: "/opt/tools" })),
    join(r, "opt/tools/only-here"),
  );
});

test("a host program is not the image's; not executable and looping links are refused", () => {
  const r = rootfs();
  const so = sandbox(r);
  // The host has /usr/bin/env; the image does not: it is not found, whatever the host holds.
  assert.ok(realpathSync("/usr/bin/env"));
  assert.throws(
    () => programInSandbox("env", so),
    (e) => isHostError(e, "ProgramNotFound"),
  );
  assert.throws(
    () => programInSandbox("not-exec", so),
    (e) =>
      isHostError(e, "ProgramNotFound") && e.message.includes("not-exec is not executable in the sandbox"),
  );
  assert.deepEqual(findInside(sandboxView(so), "loop"), {
    error: "ENOENT",
    searched: ["/usr/local/bin/loop", "/usr/bin/loop", "/bin/loop"],
  });
});

test("without an image the system is the host's /usr, and the host's program is found there", () => {
  const ws = mkdtempSync(join(tmpdir(), "sbx-view-ws-"));
  const so: SandboxOptions = { workspace: ws };
  assert.equal(programInSandbox("sh", so), realpathSync("/usr/bin/sh"));
  assert.throws(
    () => programInSandbox("no-such-program-here", so),
    (e) => isHostError(e, "ProgramNotFound") && /the host's \/usr/.test(e.message),
  );
});
