// A host killed mid-transaction (pgfaults.test.ts): with SBX_STORE_CRASH_AT set, runs one operation
// and is SIGKILLed at that fault step, its rows written but not committed. Usage:
//   kill-child.ts URL append ID HEAD | object | log NAME
import { digestBytes, utf8, type Digest } from "@sbx/wire";
import { PgStore } from "../../src/pg/index.ts";
import { LOG_GENESIS } from "../../src/log/index.ts";

const [url, op, a, b] = process.argv.slice(2) as [string, string, string, string];
const store = await PgStore.open(url, { max: 1 });
if (op === "append")
  await store.appendSegment(a as Digest, b as Digest, {
    kind: "executed",
    attestation: digestBytes(utf8("killed")),
  });
else if (op === "object") {
  const big = new Uint8Array(3 * (1 << 20)).map((_, i) => (i * 31) >>> 8);
  await store.putObject(big);
} else if (op === "log") await store.logs.appendLog(a, LOG_GENESIS, utf8("killed"));
process.stdout.write("not killed\n");
await store.close();
