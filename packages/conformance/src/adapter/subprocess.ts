// The JSON-lines subprocess adapter (sandbox-attest §11.2). The harness writes one request per line
// to the implementation's stdin, {"id":n,"op":"…","input":…}, and reads one response per line from
// its stdout, {"id":n,"ok":true,"output":…} or {"id":n,"ok":false,"error":"Code"}, in order.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Json } from "@sbx/wire";
import type { Adapter, OpResult } from "../types.ts";
import { CAPABILITIES_OP, readCapabilities } from "./capabilities.ts";

/** subprocessAdapter starts `command` (run by sh) and speaks the JSON-lines protocol with it. */
export function subprocessAdapter(command: string): Adapter {
  const child = spawn("sh", ["-c", command], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const waiting = new Map<number, (r: OpResult) => void>();
  let next = 0;
  lines.on("line", (line) => {
    let msg: { id?: unknown; ok?: unknown; output?: Json; error?: unknown };
    try {
      msg = JSON.parse(line) as typeof msg;
    } catch {
      return;
    }
    const done = typeof msg.id === "number" ? waiting.get(msg.id) : undefined;
    if (!done) return;
    waiting.delete(msg.id as number);
    done(
      msg.ok === true ? { ok: true, output: msg.output ?? null } : { ok: false, error: String(msg.error) },
    );
  });
  child.on("exit", () => {
    for (const done of waiting.values()) done({ ok: false, error: "AdapterExited" });
    waiting.clear();
  });
  const call = (op: string, input: Json): Promise<OpResult> => {
    const id = next++;
    return new Promise((resolve) => {
      waiting.set(id, resolve);
      child.stdin.write(JSON.stringify({ id, op, input }) + "\n");
    });
  };
  return {
    name: `subprocess: ${command}`,
    async capabilities() {
      return readCapabilities(await call(CAPABILITIES_OP, {}));
    },
    call,
    close() {
      child.stdin.end();
      return new Promise((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.on("exit", () => resolve());
      });
    },
  };
}
