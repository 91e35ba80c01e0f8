// §5.1 battery driver: a caller that holds an inherited descriptor without close-on-exec (fd 3, given
// by its own parent) runs a sandboxed unit that tries to use descriptors 3–9. Prints one JSON line:
// whether the caller itself could read fd 3, and the unit's output and outcome.
// Usage: node --import tsx sandbox-fd-driver.ts WORKSPACE
import { readSync } from "node:fs";
import { testKey, addressOf } from "@sbx/wire";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { runUnit } from "@sbx/host/run";

const probe =
  "echo RAN; for n in 3 4 5 6 7 8 9; do if (cat <&$n) >/dev/null 2>&1; then echo ESCAPE:fd$n; fi; done; exit 0";

async function main(): Promise<void> {
  const buf = Buffer.alloc(16);
  let hostReads = false;
  try {
    hostReads = readSync(3, buf, 0, 16, 0) > 0;
  } catch {
    hostReads = false;
  }
  const none = addressOf({});
  const r = await runUnit({
    argv: ["/bin/sh", "-c", probe],
    hostKey: testKey("host"),
    unitId: unitId(makeUnit({ argv: ["/bin/sh", "-c", probe], manifest: none, level: "S0" })),
    grantsId: none,
    manifest: none,
    policy: none,
    sandbox: { workspace: process.argv[2] ?? "" },
  });
  process.stdout.write(
    JSON.stringify({ hostReads, stdout: r.stdout.toString(), outcome: r.outcome, level: r.level }) + "\n",
  );
}

await main();
