// A worker of jcp-mint-race.test.ts: says "ready", waits for the go file, then runs `jcp standing
// mint` (the command itself, in this process) once per event file given and prints one JSON line per
// mint: {code: "ok" | the refusal's code, retries}. Usage: mint-race-worker.ts GOFILE OUTDIR
// EVENTFILE… -- MINT-ARGS… (each mint writes its chain to OUTDIR/<event file's name>.chain).
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { commands } from "../src/commands/jcp/standing.ts";

const mint = commands.find((c) => c.name === "standing mint")!;
const [go, outDir, ...rest] = process.argv.slice(2);
const sep = rest.indexOf("--");
const events = rest.slice(0, sep);
const args = rest.slice(sep + 1);
process.stdout.write("ready\n");
while (!existsSync(go!)) await new Promise((r) => setTimeout(r, 2));
for (const ev of events) {
  const out: string[] = [];
  let line: { code: string; retries: number };
  try {
    const chain = join(outDir!, `${basename(ev)}.chain`);
    await mint.run([...args, "--event", ev, "--out", chain, "--json"], {
      out: (l) => out.push(l),
      err: () => undefined,
    });
    line = { code: "ok", retries: (JSON.parse(out.join("\n")) as { retries: number }).retries };
  } catch (e) {
    line = { code: (e as { code?: string }).code ?? String(e), retries: -1 };
  }
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
