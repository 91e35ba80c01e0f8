// §5.1 battery driver: a caller that holds an inherited descriptor without close-on-exec (fd 3, given
// by its own parent) runs a sandboxed unit that tries to use descriptors 3–9: to read them, and with
// `--exec DIGEST` (gated by a policy denying DIGEST, §5.5.5) to execute them through /proc/self/fd.
// Prints one JSON line: whether the caller itself could read fd 3, and the unit's output and outcome.
// Usage: node --import tsx sandbox-fd-driver.ts WORKSPACE [--exec DIGEST]
import { readSync } from "node:fs";
import { isDigest, testKey } from "@sbx/wire";
import { makePolicy } from "@sbx/sandbox-attest/execpolicy";
import { runScript } from "@sbx/host/run";

const read = "(cat <&$n) >/dev/null 2>&1 && echo ESCAPE:fd$n";
const exec = "/proc/self/fd/$n m >/dev/null 2>&1 && echo ESCAPE:exec-fd$n";

async function main(): Promise<void> {
  const buf = Buffer.alloc(16);
  let hostReads = false;
  try {
    hostReads = readSync(3, buf, 0, 16, 0) > 0;
  } catch {
    hostReads = false;
  }
  const [ws, flag, digest] = process.argv.slice(2);
  const gated = flag === "--exec" && digest !== undefined && isDigest(digest);
  const probe = `echo RAN; for n in 3 4 5 6 7 8 9; do ${read}; ${gated ? `${exec}; ` : ""}done; exit 0`;
  const r = await runScript(probe, {
    sandbox: { workspace: ws ?? "" },
    hostKey: testKey("host"),
    ...(gated ? { execPolicy: makePolicy("denylist", [], [digest]) } : {}),
  });
  process.stdout.write(
    JSON.stringify({
      hostReads,
      stdout: r.stdout.toString(),
      outcome: r.outcome,
      level: r.level,
      held: r.gate?.held === true,
    }) + "\n",
  );
}

await main();
