// §14.9 From a manifest's environment to the sandbox a unit runs in: the pinned image's verified
// rootfs as the system, the image config's Env with the manifest's env over it, the manifest's user
// (else the image config's), the workspace at the manifest's folder, and hostRequirements as limits.
import { availableParallelism, totalmem } from "node:os";
import { join } from "node:path";
import { lstatSync } from "node:fs";
import type { ManifestEnvironment, OfferedEnvironment } from "@sbx/sandbox-attest/manifest";
import { parsePinnedImage } from "@sbx/sandbox-attest/manifest";
import { HostError } from "../errors.ts";
import type { Limits } from "../sandbox/cgroup.ts";
import type { SandboxOptions } from "../sandbox/sandbox.ts";
import { ensureRootfs, type Rootfs } from "./rootfs.ts";
import type { ImageStore } from "./store.ts";
import { imageSystem } from "./system.ts";

/** What a run takes from a manifest with an image (§14.9). */
export interface ImageRunOptions {
  /** The sandbox options the manifest sets; the caller adds the workspace and its own flags. */
  readonly sandbox: Omit<SandboxOptions, "workspace">;
  readonly rootfs: Rootfs;
}

/** The limits a caller asked for (flags), each checked against the manifest's requirements. */
export type AskedLimits = Partial<Limits> & { readonly workspaceBytes?: number };

/** imageEnv (§14.9) is the image config's Env with the manifest's env applied over it (null unsets). */
export function imageEnv(
  configEnv: readonly string[],
  env: ManifestEnvironment["env"],
): Record<string, string> {
  const out = new Map<string, string>();
  for (const kv of configEnv) {
    const i = kv.indexOf("=");
    out.set(kv.slice(0, i), kv.slice(i + 1));
  }
  for (const [k, v] of Object.entries(env))
    if (v === null) out.delete(k);
    else out.set(k, v);
  return Object.assign(Object.create(null) as Record<string, string>, Object.fromEntries(out));
}

/**
 * imageUser (§14.9): the manifest's user, else the image config's User when it is a name (a
 * `name:group` keeps the name), else root for an empty or `0` User. A numeric non-zero User cannot be
 * mapped to a name: `ImageInvalid`.
 */
export function imageUser(manifestUser: string | null, configUser: string): string {
  if (manifestUser !== null) return manifestUser;
  const name = configUser.split(":")[0] ?? "";
  if (name === "" || name === "0") return "root";
  if (/^\d+$/.test(name))
    throw new HostError("ImageInvalid", `the image's User ${configUser} is a number, not a name`);
  return name;
}

const bytes = (s: string): number =>
  Number(BigInt(s) > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : s);

/**
 * requirementLimits (§14.9) turns hostRequirements into limits: cpus → the CPU limit, memory → the
 * memory limit, storage → the largest workspace (a zero memory or storage keeps the host default). A
 * limit the caller asked for must be at least the requirement, and the host must have what is
 * required (cpus, memory; a required GPU is never offered): else `RequirementsUnmet`.
 */
export function requirementLimits(
  hr: ManifestEnvironment["host_requirements"],
  asked: AskedLimits,
): AskedLimits {
  const want = {
    cpuMillis: Math.round(hr.cpus * 1000),
    memoryBytes: bytes(hr.memory_bytes),
    workspaceBytes: bytes(hr.storage_bytes),
  };
  const short: string[] = [];
  if (hr.gpu.mode === "required") short.push("a GPU (this host's sandbox offers none)");
  if (hr.cpus > availableParallelism()) short.push(`${hr.cpus} cpus (host has ${availableParallelism()})`);
  if (want.memoryBytes > totalmem())
    short.push(`${hr.memory_bytes} bytes of memory (host has ${totalmem()})`);
  for (const k of ["cpuMillis", "memoryBytes", "workspaceBytes"] as const) {
    const a = asked[k];
    if (a !== undefined && a < want[k]) short.push(`${k} ${want[k]} (asked for ${a})`);
  }
  if (short.length > 0) throw new HostError("RequirementsUnmet", `the manifest requires ${short.join(", ")}`);
  return {
    ...asked,
    cpuMillis: asked.cpuMillis ?? want.cpuMillis,
    ...(want.memoryBytes > 0 || asked.memoryBytes !== undefined
      ? { memoryBytes: asked.memoryBytes ?? want.memoryBytes }
      : {}),
    ...(want.workspaceBytes > 0 || asked.workspaceBytes !== undefined
      ? { workspaceBytes: asked.workspaceBytes ?? want.workspaceBytes }
      : {}),
  };
}

// The workspace is mounted at the folder: its first component must be new (made on the sandbox's own
// root) or a directory of the image, and the folder itself must then exist in the image.
function checkFolder(rootfs: string, folder: string): void {
  const parts = folder.split("/").filter((p) => p !== "");
  let p = rootfs;
  for (const [i, c] of parts.entries()) {
    p = join(p, c);
    let st;
    try {
      st = lstatSync(p);
    } catch {
      if (i === 0) return;
      throw new HostError(
        "WorkspaceFolderUnusable",
        `${folder}: ${c} does not exist in the image's read-only tree`,
      );
    }
    if (!st.isDirectory() || st.isSymbolicLink())
      throw new HostError("WorkspaceFolderUnusable", `${folder}: ${c} is not a directory of the image`);
  }
}

/**
 * imageRunOptions (§14.9) prepares the sandbox for a manifest environment whose image is pinned:
 * the image must be in `store` (`ImageNotInStore`) with the same bytes (`ImageDigestMismatch`); its
 * rootfs is unpacked or taken from the verified cache (ensureRootfs, with its refusals); then env,
 * user, workspace folder and limits as the manifest says. `asked` are the caller's limit flags.
 */
export function imageRunOptions(
  store: ImageStore,
  env: ManifestEnvironment,
  asked: AskedLimits = {},
): ImageRunOptions {
  const pinned = parsePinnedImage(env.image);
  if (pinned === null) throw new HostError("ImageInvalid", `image ${env.image} is not pinned by sha256`);
  if (!store.hasBlob(pinned.sha256))
    throw new HostError("ImageNotInStore", `image ${env.image} is not in the image store ${store.dir}`);
  const limits = requirementLimits(env.host_requirements, asked);
  const rootfs = ensureRootfs(store, pinned.sha256);
  checkFolder(rootfs.dir, env.workspace_folder);
  const user = imageUser(env.user, rootfs.config.user);
  const { workspaceBytes, ...cg } = limits;
  return {
    rootfs,
    sandbox: {
      image: imageSystem(rootfs.dir, rootfs.tree, rootfs.manifestHex),
      env: imageEnv(rootfs.config.env, env.env),
      user,
      workspaceFolder: env.workspace_folder,
      limits: cg,
      ...(workspaceBytes !== undefined ? { workspaceBytes } : {}),
    },
  };
}

/**
 * offeredEnvironment (§14.7, §14.9) is what this host offers a unit run by imageRunOptions for `env`:
 * the pinned image (by digest), exactly the manifest's env over the image's, its user and workspace
 * folder, and this host's cpus and memory (storage unmeasured: "0"; no GPU). A resume passes it to
 * satisfies (§14.7) with the manifest address its run record holds.
 */
export function offeredEnvironment(env: ManifestEnvironment): OfferedEnvironment {
  return {
    image: env.image,
    env: { ...env.env },
    user: env.user,
    workspace_folder: env.workspace_folder,
    host: { cpus: availableParallelism(), memory_bytes: String(totalmem()), storage_bytes: "0", gpu: null },
  };
}
