// A worker of jcp-spend-race.test.ts: says "ready", waits for the go file, then runs `jcp spend`
// (the command itself, in this process) COUNT times and prints one JSON line per spend:
// {code: "ok" | the refusal's code, retries}. Usage: spend-race-worker.ts GOFILE COUNT SPEND-ARGS…
import { existsSync } from "node:fs";
import { command } from "../src/commands/jcp/spend.ts";

const [go, count, ...args] = process.argv.slice(2);
process.stdout.write("ready\n");
while (!existsSync(go!)) await new Promise((r) => setTimeout(r, 2));
for (let i = 0; i < Number(count); i++) {
  const out: string[] = [];
  let line: { code: string; retries: number };
  try {
    await command.run([...args, "--json"], { out: (l) => out.push(l), err: () => undefined });
    line = { code: "ok", retries: (JSON.parse(out.join("\n")) as { retries: number }).retries };
  } catch (e) {
    line = { code: (e as { code?: string }).code ?? String(e), retries: -1 };
  }
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
