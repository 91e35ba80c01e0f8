// Helpers of the `sbx on-event` tests (sbx-on-event*.test.ts): a held grant for /fs/work/**, a mint
// policy over it with a given rate and budgets, the on-event arguments, events written to a file,
// and the JSON lines on-event prints, ordered by event.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../src/main.ts";

/** cli runs `sbx` or `jcp` in this process. */
export async function cli(tool: "sbx" | "jcp", argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(tool, argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** One line of `sbx on-event --json` for an event (or a --pending child, n = 0). */
export interface EventLine {
  n: number;
  event: string | null;
  status: "ran" | "refused";
  code?: string;
  child?: string;
  mint_seq?: number;
  exit?: number;
  recovered?: true;
  run?: { outcome: { status: string }; energy: { total_uj: string }; grant: { spent_uj: string } };
}

/** setup makes the keys, the held chain and a mint policy with `rate` ("count/window_ms"). */
export async function setup(rate: string, heldUj: string, childUj: string) {
  const dir = mkdtempSync(join(tmpdir(), "sbx-on-event-"));
  const p = (n: string) => join(dir, n);
  for (const k of ["root", "alice", "bob", "host"])
    assert.equal((await cli("jcp", ["keygen", "--out", p(`${k}.key`)])).code, 0);
  const now = Date.now();
  const issued = await cli("jcp", [
    ...["issue", "--key", p("root.key"), "--holder", p("alice.key"), "--resource", "/fs/work/**"],
    ...["--action", "read", "--action", "write", "--uj", heldUj, "--depth", "2", "--ttl", "3600000"],
    ...["--out", p("held.chain")],
  ]);
  assert.equal(issued.code, 0, issued.err);
  const created = await cli("jcp", [
    ...["standing", "create", "--key", p("root.key"), "--held", p("held.chain"), "--holder", p("bob.key")],
    ...["--trigger", "push@ci", "--resource", "/fs/work/**", "--action", "read", "--action", "write"],
    ...["--uj", childUj, "--lifetime-ms", "600000", "--max-children", "20", "--max-total-uj", "1000J"],
    ...["--rate", rate, "--nbf", String(now - 60_000), "--exp", String(now + 3_600_000)],
    ...["--out", p("policy.json")],
  ]);
  assert.equal(created.code, 0, created.err);
  const args = [
    ...["on-event", "--standing", p("policy.json"), "--held", p("held.chain"), "--minter", p("alice.key")],
    ...["--mints", p("mints"), "--key", p("host.key"), "--trust", p("root.key"), "--ledger", p("ledger")],
  ];
  const events = (xs: object[]) => {
    writeFileSync(p("events.jsonl"), xs.map((x) => JSON.stringify(x)).join("\n") + "\n");
    return ["--events", p("events.jsonl")];
  };
  return { dir, p, args, events, now };
}

/** parse splits on-event's JSON lines into the event lines, by event, and the summary. */
export const parse = (out: string) => {
  const lines = out
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as EventLine & { summary?: unknown });
  // Lines come as events are handled (a refusal at once, a run when it ends): order them by event.
  const events = lines.filter((l) => l.summary === undefined).sort((a, b) => a.n - b.n);
  return { events, summary: lines.at(-1)!.summary };
};
