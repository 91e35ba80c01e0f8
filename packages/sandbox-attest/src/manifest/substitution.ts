// §14.4 Substitutions: `${…}` in a kept value is resolved at ingestion only when its value follows from
// the manifest itself; anything that reads the host, or that the ingester cannot know, is refused.
import type { Offending } from "./jsonc.ts";

const VARIABLE = /\$\{([^}]*)\}/g;
/** Substitutions whose value is fixed by the manifest's own workspace folder (§14.4). */
const DETERMINISTIC = new Set(["containerWorkspaceFolder", "containerWorkspaceFolderBasename"]);
const HOST_EXACT = new Set(["localWorkspaceFolder", "localWorkspaceFolderBasename", "localEnv", "env"]);

/** classifySubstitution names the refusal code of one `${inner}`, or null when it is deterministic, §14.4. */
export function classifySubstitution(inner: string): "HostSubstitution" | "UnknownSubstitution" | null {
  if (DETERMINISTIC.has(inner)) return null;
  const head = inner.split(":", 1)[0] ?? "";
  if (HOST_EXACT.has(head)) return "HostSubstitution";
  return "UnknownSubstitution";
}

/**
 * scanSubstitutions pushes one refusal per distinct code for the `${…}` in `s` at `pointer` (§14.4).
 * With `allowDeterministic` false even the workspace-folder substitutions are refused (the workspace
 * folder cannot name itself). Returns whether `s` is free of refused substitutions.
 */
export function scanSubstitutions(
  s: string,
  pointer: string,
  out: Offending[],
  allowDeterministic = true,
): boolean {
  const codes = new Set<string>();
  for (const m of s.matchAll(VARIABLE)) {
    const inner = m[1] ?? "";
    const code = classifySubstitution(inner) ?? (allowDeterministic ? null : "UnknownSubstitution");
    if (code !== null) codes.add(code);
  }
  for (const code of [...codes].sort()) out.push({ pointer, code });
  return codes.size === 0;
}

/** resolveSubstitutions replaces the deterministic substitutions in `s` for `workspaceFolder` (§14.4). */
export function resolveSubstitutions(s: string, workspaceFolder: string): string {
  const base = workspaceFolder.split("/").pop() ?? "";
  return s.replace(VARIABLE, (all, inner: string) => {
    if (inner === "containerWorkspaceFolder") return workspaceFolder;
    if (inner === "containerWorkspaceFolderBasename") return base;
    return all;
  });
}
