// Serves the reference implementation over the JSON-lines subprocess protocol (§11.2), so the
// harness's subprocess adapter can be tested against a known implementation:
//   npm run conformance -- --adapter "node --import tsx packages/conformance/src/serve.ts"
import { createInterface } from "node:readline";
import type { Json } from "@sbx/wire";
import { ALL_CAPABILITIES, handlerTable, runHandler } from "./adapter/inproc.ts";
import { CAPABILITIES_OP } from "./adapter/capabilities.ts";
import { loadClasses } from "./registry.ts";

const table = handlerTable(await loadClasses());
const rl = createInterface({ input: process.stdin });
let queue = Promise.resolve();
rl.on("line", (line) => {
  queue = queue.then(async () => {
    const req = JSON.parse(line) as { id: number; op: string; input: Json };
    const r =
      req.op === CAPABILITIES_OP
        ? { ok: true, output: { classes: ALL_CAPABILITIES.classes, live: ALL_CAPABILITIES.live } }
        : await runHandler(table, req.op, req.input);
    process.stdout.write(JSON.stringify({ id: req.id, ...r }) + "\n");
  });
});
