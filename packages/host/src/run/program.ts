// §8.2 The binary of a process start: argv[0] resolved the way execvp resolves it, and the BLAKE3
// digest of the file it names, streamed so a large binary is never held in memory.
import { accessSync, constants, closeSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { createBlake3, formatDigest, type Digest } from "@sbx/wire";
import { HostError } from "../errors.ts";
import type { SandboxOptions } from "../sandbox/sandbox.ts";
import { findInside, sandboxView } from "./view.ts";

/** A resolved program: the real path of the file executed, or why it cannot be executed. */
export type Resolved = { readonly path: string } | { readonly error: "ENOENT" | "EACCES" };

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * resolveProgram finds the file `argv0` names: a name with a slash relative to `cwd`, otherwise the
 * first executable regular file of that name on `PATH` (execvp's rule). Symlinks are resolved, so
 * the digest is of the file the kernel maps. Returns ENOENT or EACCES where execvp would fail.
 */
export function resolveProgram(argv0: string, cwd: string, pathVar: string | undefined): Resolved {
  const candidates = argv0.includes("/")
    ? [isAbsolute(argv0) ? argv0 : resolve(cwd, argv0)]
    : (pathVar ?? "/usr/local/bin:/usr/bin:/bin")
        .split(delimiter)
        .filter((d) => d !== "")
        .map((d) => join(resolve(cwd, d), argv0));
  for (const c of candidates) if (executable(c)) return { path: realpathSync(c) };
  const exists = candidates.some((c) => {
    try {
      return statSync(c).isFile();
    } catch {
      return false;
    }
  });
  return { error: exists ? "EACCES" : "ENOENT" };
}

/** digestFile returns the BLAKE3 digest of a file's bytes, read in 1 MiB blocks. */
export function digestFile(path: string): Digest {
  const h = createBlake3();
  const fd = openSync(path, "r");
  try {
    const buf = new Uint8Array(1 << 20);
    for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) h.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return formatDigest(h.digest());
}

/**
 * programInSandbox (§8.2) is the host path of the file argv[0] names inside the sandbox `so` builds
 * (view.ts findInside: the image's rootfs when a manifest pins one, PATH from the sandbox's env).
 * Refuses, before anything starts, a program that is not there or not executable
 * (`ProgramNotFound`, naming the paths searched): no level is stated for a unit that never ran.
 */
export function programInSandbox(argv0: string, so: SandboxOptions): string {
  const v = sandboxView(so);
  const f = findInside(v, argv0);
  if ("path" in f) return f.path;
  const what = f.error === "EACCES" ? "is not executable" : "is not";
  throw new HostError(
    "ProgramNotFound",
    `${argv0} ${what} in the sandbox (${v.system}): searched ${f.searched.join(", ")}`,
  );
}
