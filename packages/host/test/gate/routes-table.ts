// The §5.5.1 routes to a denied binary, shared by the gate battery outside any sandbox
// (deny.test.ts, runGated) and inside the reference sandbox (sandbox/gate.test.ts, runUnit): one
// table, one preparation, one check of each refusal.
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import type { ExecDecision } from "@sbx/sandbox-attest/journal";
import { EXECVEAT_PROBE_PATH } from "@sbx/host/gate";
import { LOADER } from "./fixture.ts";

export type Route = "direct" | "interpreter" | "loader";

/** Each case: its name, a script that tries the denied binary one way (PY is python3), the route it is refused on. */
export const DENY_ROUTES: readonly (readonly [string, string, Route])[] = [
  ["directly", "./denied m", "direct"],
  ["renamed", "mv renamed-tool other-name && ./other-name m", "direct"],
  ["moved", "cp denied sub/deeper/tool && mv sub/deeper/tool sub/moved && ./sub/moved m", "direct"],
  ["copied", "cp denied copy && ./copy m", "direct"],
  ["hard-linked", "ln -f denied hard && ./hard m", "direct"],
  ["symlinked", "ln -sf denied sym && ./sym m", "direct"],
  ["as a shebang interpreter", "./script.sh m", "interpreter"],
  ["through env", "env ./denied m", "direct"],
  ["through sh -c", "sh -c './denied m'", "direct"],
  ["through python3 os.execv", 'PY -c \'import os; os.execv("./denied", ["denied", "m"])\'', "direct"],
  ["through execveat (dirfd + name)", "./execveat-probe . denied m", "direct"],
  ["through execveat (AT_EMPTY_PATH, fexecve form)", "./execveat-probe ./denied '' m", "direct"],
  ["through the dynamic loader", `${LOADER} ./denied m`, "loader"],
  [
    "through a renamed copy of the loader",
    `cp ${LOADER} ./not-a-loader && ./not-a-loader ./denied m`,
    "loader",
  ],
];

/**
 * prepareDenyRoutes puts into workspace `ws` what the scripts need: a renamed copy of `denied`, a
 * script whose shebang names `deniedSeen` (the denied binary's path as the gated process sees it),
 * the execveat probe, and a directory to move into.
 */
export function prepareDenyRoutes(ws: string, denied: string, deniedSeen: string): void {
  mkdirSync(join(ws, "sub/deeper"), { recursive: true });
  copyFileSync(denied, join(ws, "renamed-tool"));
  chmodSync(join(ws, "renamed-tool"), 0o755);
  writeFileSync(join(ws, "script.sh"), `#!${deniedSeen}\necho script body\n`, { mode: 0o755 });
  copyFileSync(EXECVEAT_PROBE_PATH, join(ws, "execveat-probe"));
  chmodSync(join(ws, "execveat-probe"), 0o755);
}

/** denyScript returns the case's full script: marker removed, PY replaced, the status printed. */
export const denyScript = (script: string, python: string): string =>
  `rm -f m; ${script.replace("PY", python)}; echo "status=$?"`;

/** assertRefused checks one case: the denied binary neither ran nor left its marker, and its refusal on `route` is journaled. */
export function assertRefused(
  stdout: string,
  decisions: readonly ExecDecision[],
  ws: string,
  digest: Digest,
  route: Route,
): void {
  assert.ok(!stdout.includes("DENIED-RAN"), `the denied binary ran: ${stdout}`);
  assert.ok(!existsSync(join(ws, "m")), "the denied binary left its marker");
  assert.match(stdout, /status=\d+/);
  const refused = decisions.filter((d) => d.digest === digest && !d.allowed);
  assert.ok(
    refused.some((d) => d.route === route && d.rule === "denied"),
    `no ${route} refusal journaled: ${JSON.stringify(decisions)}`,
  );
}
