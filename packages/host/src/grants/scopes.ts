// jcp §4.2 scopes onto the sandbox (sandbox-attest §5.1, §5.2): what a run under a grant can reach.
// A filesystem resource `/fs/<path>/**` (or `/fs/<path>`) names the path <path> both inside the
// sandbox and on the host: the workspace folder (/work) is the run's workspace, any other path is
// the host path bound in at the same place, read-only with `read`. With `write` such a path is
// refused (`DiskLimitUnavailable`, refuseUnbounded; sandbox-attest §5.3 item 2, §5.6 item 2): this
// host bounds no host folder as the unit writes, so the workspace, /tmp and /dev/shm stay the only
// writable places a unit sees. Nothing else of the host is bound besides the read-only system (/usr
// and the generated /etc, §5.4). A
// pattern with a `*` segment, `/fs/**` itself, or a path under a kernel interface or a system mount
// names no one host path: it is listed as unmapped and binds nothing. Such a resource, and any other
// the host does not enforce, refuses the run (`ResourceUnsupported`, refuseUnsupported; §5.6 item 8).
import type { Scope } from "@sbx/jcp-grant/grant";
import { HostError } from "../errors.ts";
import type { ExtraBind } from "../sandbox/bwrap.ts";
import { loopbackPorts } from "./netfwd.ts";

/** What a scope maps onto: the workspace's mode, the extra binds, and resources that map to nothing. */
export interface ScopeMap {
  /** The workspace's mode, or null when no resource gives it (the run is then refused). */
  readonly workspace: "rw" | "ro" | null;
  readonly binds: readonly ExtraBind[];
  readonly unmapped: readonly string[];
}

// Paths a grant can never bind: the sandbox's own system and kernel mounts.
const RESERVED = [
  "/",
  "/usr",
  "/etc",
  "/proc",
  "/dev",
  "/sys",
  "/tmp",
  "/bin",
  "/lib",
  "/lib64",
  "/sbin",
  "/run",
];

function underReserved(path: string): boolean {
  return RESERVED.some((r) => path === r || (r !== "/" && path.startsWith(`${r}/`)));
}

/** fsPath returns the path a filesystem resource names, or null when it names no one path. */
export function fsPath(resource: string): string | null {
  if (!resource.startsWith("/fs/")) return null;
  const body = resource.endsWith("/**") ? resource.slice(3, -3) : resource.slice(3);
  if (body === "" || body.split("/").some((s) => s === "*" || s === "**")) return null;
  return body;
}

/** Where a filesystem resource's path lands: the workspace, inside it, the system, or a host bind. */
type Place = "workspace" | "inside" | "system" | "bind";

function placeOf(resource: string, path: string, workspaceFolder: string): Place {
  if (path === workspaceFolder && resource.endsWith("/**")) return "workspace";
  if (path === workspaceFolder || path.startsWith(`${workspaceFolder}/`)) return "inside";
  return underReserved(path) ? "system" : "bind";
}

/**
 * mapScope maps the effective scope of a run's grant (the leaf's, which lies inside every grant above
 * it) onto the sandbox for a workspace at `workspaceFolder` (inside) and `workspace` (host).
 * Writable where `write` is granted, read-only where only `read` is; a resource under a reserved
 * system path, or with wildcards, is unmapped. Refuses nothing; the caller decides on coverage.
 */
export function mapScope(scope: Scope, workspaceFolder: string): ScopeMap {
  const write = scope.actions.includes("write");
  const read = write || scope.actions.includes("read");
  const binds: ExtraBind[] = [];
  const unmapped: string[] = [];
  let workspace: ScopeMap["workspace"] = null;
  for (const r of scope.resources) {
    if (!r.startsWith("/fs/")) continue;
    const path = fsPath(r);
    if (!read || path === null) {
      unmapped.push(r);
      continue;
    }
    const place = placeOf(r, path, workspaceFolder);
    if (place === "workspace") workspace = write ? "rw" : "ro";
    else if (place !== "bind")
      unmapped.push(r); // inside the workspace it is the workspace's; the system is not a grant's
    else binds.push({ host: path, inside: path, writable: write });
  }
  return { workspace, binds, unmapped };
}

/**
 * unsupportedResources lists the resources of `scope` the host does not enforce (sandbox-attest
 * §5.6 item 8): a `/fs/…` resource without `read` or `write`, or one that names no one host path
 * (a `*` segment, `/fs/**`, a system or kernel mount); a `/net/…` resource other than
 * `/net/127.0.0.1/<port>` with `connect`; any resource of another kind (not `/fs/`, `/net/`,
 * `/exec/`). `/exec/…` resources are the exec gate's (item 6), which fails closed on any form.
 */
export function unsupportedResources(scope: Scope, workspaceFolder: string): string[] {
  const fs = scope.actions.includes("read") || scope.actions.includes("write");
  const ports = new Set(loopbackPorts(scope).map((p) => `/net/127.0.0.1/${String(p)}`));
  return scope.resources.filter((r) => {
    if (r.startsWith("/exec/")) return false;
    if (r.startsWith("/net/")) return !ports.has(r);
    if (!r.startsWith("/fs/")) return true;
    const path = fsPath(r);
    if (!fs || path === null) return true;
    const inWorkspace = path === workspaceFolder || path.startsWith(`${workspaceFolder}/`);
    return !inWorkspace && underReserved(path);
  });
}

/**
 * refuseUnsupported refuses (`ResourceUnsupported`) to run under scopes naming any resource the
 * host does not enforce (unsupportedResources), naming each one: a run never goes on with a part
 * of its grant silently dropped (fail closed).
 */
export function refuseUnsupported(scopes: readonly Scope[], workspaceFolder: string): void {
  const named = [...new Set(scopes.flatMap((s) => unsupportedResources(s, workspaceFolder)))];
  if (named.length > 0)
    throw new HostError(
      "ResourceUnsupported",
      `the grants name resources this host does not enforce: ${named.join(", ")}`,
      { detail: { resources: named } },
    );
}

/**
 * unboundedResources lists the resources of `scope` that would bind a host path writable besides
 * the workspace (`/fs/<path>` or `/fs/<path>/**` with `write`, naming a host bind): places this
 * host cannot bound as the unit writes (sandbox-attest §5.3 item 2).
 */
export function unboundedResources(scope: Scope, workspaceFolder: string): string[] {
  if (!scope.actions.includes("write")) return [];
  return scope.resources.filter((r) => {
    const path = fsPath(r);
    return path !== null && placeOf(r, path, workspaceFolder) === "bind";
  });
}

/**
 * refuseUnbounded refuses (`DiskLimitUnavailable`, naming each in the message and in
 * `detail.resources`) to run under scopes that would make a host folder writable besides the
 * workspace (unboundedResources): the run never gets a writable place without a kernel bound
 * (sandbox-attest §5.3 item 2, §5.6 item 2). Grant such a folder `read`, or put it in the workspace.
 */
export function refuseUnbounded(scopes: readonly Scope[], workspaceFolder: string): void {
  const named = [...new Set(scopes.flatMap((s) => unboundedResources(s, workspaceFolder)))];
  if (named.length > 0)
    throw new HostError(
      "DiskLimitUnavailable",
      `the grants make host folders writable that this host cannot bound as the unit writes (only the workspace, /tmp and /dev/shm are): ${named.join(", ")}; grant them read, or put them in the workspace`,
      { detail: { resources: named } },
    );
}

/**
 * requireWorkspace refuses (`GrantsInsufficient`) a map whose grants do not give the run its
 * workspace (`/fs<folder>/**` with `read` or `write`): a run needs at least that.
 */
export function requireWorkspace(m: ScopeMap, workspaceFolder: string): "rw" | "ro" {
  if (m.workspace === null)
    throw new HostError(
      "GrantsInsufficient",
      `the grants do not cover the workspace: /fs${workspaceFolder}/** with read or write is needed`,
    );
  return m.workspace;
}
