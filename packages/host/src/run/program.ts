// §8.2 The binary of a process start: argv[0] resolved the way execvp resolves it, and the BLAKE3
// digest of the file it names, streamed so a large binary is never held in memory.
import { accessSync, constants, closeSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join, posix, resolve } from "node:path";
import { createBlake3, formatDigest, type Digest } from "@sbx/wire";

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
 * resolveInSandbox (§8.2) resolves `argv0` the way execvp will inside a sandbox (§5.1): a name with
 * a slash against the workspace folder, otherwise on the sandbox's PATH; each candidate is mapped to
 * the host file the sandbox sees there (the workspace, or the read-only /usr with its links). A
 * candidate whose real path leaves /usr and the workspace is not one (inside it would name nothing).
 */
export function resolveInSandbox(argv0: string, workspace: string, folder: string): Resolved {
  const inside = argv0.includes("/")
    ? [posix.resolve(folder, argv0)]
    : ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"].map(
        (d) => `${d}/${argv0}`,
      );
  const ws = realpathSync(workspace);
  const toHost = (p: string): string | null => {
    if (p === folder || p.startsWith(folder + "/")) return join(ws, p.slice(folder.length));
    return /^\/(usr|bin|sbin|lib|lib64)\//.test(p) ? p : null;
  };
  const within = (real: string) => real.startsWith("/usr/") || real === ws || real.startsWith(ws + "/");
  let exists = false;
  for (const c of inside) {
    const host = toHost(c);
    if (host === null) continue;
    let real: string;
    try {
      real = realpathSync(host);
    } catch {
      continue;
    }
    if (!within(real)) continue;
    if (executable(real)) return { path: real };
    exists ||= statSync(real).isFile();
  }
  return { error: exists ? "EACCES" : "ENOENT" };
}
