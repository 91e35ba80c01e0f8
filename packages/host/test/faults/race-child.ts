// A racer for faults.test.ts: for each line "<record> <head> <name> <start ms>" on stdin it waits for the
// start time (spinning, so two racers leave together), appends an executed segment naming `name`
// and prints "won <new head>" or the error's code.
import { createInterface } from "node:readline";
import { digestBytes, utf8, type Digest } from "@sbx/wire";
import { FileStore } from "../../src/store/index.ts";

const [root] = process.argv.slice(2) as [string];
const s = FileStore.open(root);
for await (const line of createInterface({ input: process.stdin })) {
  const [id, head, name, at] = line.split(" ") as [Digest, Digest, string, string];
  while (Date.now() < Number(at)) {
    /* spin: both racers start within microseconds of each other */
  }
  try {
    const h = await s.appendSegment(id, head, { kind: "executed", attestation: digestBytes(utf8(name)) });
    console.log(`won ${h}`);
  } catch (e) {
    console.log((e as { code?: string }).code ?? String(e));
  }
}
