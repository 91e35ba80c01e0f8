// `jcp spend`: a metering host records a spend under a chain's leaf (jcp §4.3), debiting every grant
// on the chain, in a ledger file that is replayed and verified before each append.
import { existsSync } from "node:fs";
import { grantStore, SpendLedger } from "@sbx/jcp-grant/grant";
import type { Envelope } from "@sbx/wire";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { readKey } from "../../keyfile.ts";
import {
  amountArg,
  countArg,
  principal,
  readChain,
  readJson,
  readList,
  timeArg,
  writeJson,
} from "./lib/files.ts";

const help = `usage: jcp spend --host-key FILE --chain CHAINFILE --ledger FILE --uj AMOUNT --root DID|KEYFILE…
                 [--calls N] [--wall-ms N] [--at TIME] [--host DID…] [--revocations FILE] [--json]
  Replays and verifies the ledger (every receipt, its signature, its chain position, every budget),
  verifies the chain at the spend's time, refuses a spend that would take any grant on the chain
  past its budget (Overspend), and otherwise appends a receipt signed by the host key. The ledger
  file ({grants, receipts}) is created when missing and rewritten atomically with fsync.
  --host-key FILE     the metering host's key file (signs the receipt; trusted for the replay)
  --chain CHAINFILE   the grant chain spent under (root first); its leaf is debited with its ancestors
  --ledger FILE       the ledger file
  --uj AMOUNT         microjoules spent, or joules with a J suffix
  --calls N           calls used (default 1);  --wall-ms N   wall milliseconds used (default 0)
  --root DID          a trusted root issuer (repeatable)
  --host DID          a further metering host whose receipts the ledger may hold (repeatable)
  --at TIME           time of the spend: epoch ms or ISO 8601 (default: now)
  --revocations FILE  a revocation list file
  --json              print {receipt address, remaining budgets}
exit: 0 recorded, 1 refused (Overspend, Expired, Revoked, …) or the ledger does not verify, 2 usage error`;

interface LedgerFile {
  grants: Envelope[];
  receipts: Envelope[];
}

function readLedger(path: string): LedgerFile {
  if (!existsSync(path)) return { grants: [], receipts: [] };
  const v = readJson(path) as Partial<LedgerFile> | null;
  if (!v || !Array.isArray(v.grants) || !Array.isArray(v.receipts))
    throw new UsageError(`${path} is not a ledger file ({grants, receipts})`);
  return { grants: v.grants, receipts: v.receipts };
}

export const command: Command = {
  name: "spend",
  summary: "record a metered spend under a grant, debiting the whole chain (§4.3)",
  help,
  run(args, io) {
    const { values: v } = parseOptions(
      args,
      {
        "host-key": { type: "string" },
        chain: { type: "string" },
        ledger: { type: "string" },
        uj: { type: "string" },
        calls: { type: "string" },
        "wall-ms": { type: "string" },
        root: { type: "string", multiple: true },
        host: { type: "string", multiple: true },
        at: { type: "string" },
        revocations: { type: "string" },
        json: { type: "boolean" },
      },
      false,
    );
    if (!v["host-key"] || !v.chain || !v.ledger || !v.uj || !v.root?.length)
      throw new UsageError("--host-key, --chain, --ledger, --uj and --root are required");
    const host = readKey(v["host-key"]);
    const chain = readChain(v.chain);
    const file = readLedger(v.ledger);
    const revocations = readList(v.revocations);
    const opts = {
      roots: v.root.map(principal),
      hosts: [host.did, ...(v.host ?? []).map(principal)],
      ...(revocations ? { revocations } : {}),
    };
    const ledger = SpendLedger.replay(grantStore(file.grants), file.receipts, opts);
    const calls = countArg(v.calls, "calls");
    const wall_ms = countArg(v["wall-ms"], "wall-ms");
    const receipt = ledger.spend(
      chain,
      host,
      {
        uj: amountArg(v.uj, "uj") ?? "0",
        ...(calls !== undefined ? { calls } : {}),
        ...(wall_ms !== undefined ? { wall_ms } : {}),
      },
      timeArg(v.at, "at"),
    );
    const grants = [...grantStore([...file.grants, ...chain]).values()];
    writeJson(v.ledger, { grants, receipts: [...file.receipts, receipt] });
    const remaining = Object.fromEntries(ledger.remaining());
    if (v.json) printJson(io, { receipts: ledger.receipts.length, remaining });
    else {
      io.out(`spend recorded (receipt ${ledger.receipts.length}); remaining:`);
      for (const [a, r] of ledger.remaining())
        io.out(
          `  ${a}  ${r.uj} µJ${r.calls === null ? "" : `, ${r.calls} calls`}${r.wall_ms === null ? "" : `, ${r.wall_ms} ms`}`,
        );
    }
    return Promise.resolve(EXIT.ok);
  },
};
