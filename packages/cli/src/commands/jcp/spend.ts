// `jcp spend`: a metering host records a spend under a chain's leaf (jcp §4.3), debiting every grant
// on the chain, in a ledger folder verified (from this process's last verified state) before each append.
import { GrantCache } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { readKey } from "@sbx/host/keys";
import { amountArg, countArg, principal, readChain, readList, timeArg } from "./lib/files.ts";
import { spendOn } from "@sbx/host/ledger";
import { sharedUrl, spendSharedCommand, STORE_HELP } from "./lib/shared.ts";

const help = `usage: jcp spend --host-key FILE --chain CHAINFILE --ledger DIR --uj AMOUNT --root DID|KEYFILE…
                 [--calls N] [--wall-ms N] [--at TIME] [--host DID…] [--revocations FILE] [--json]
  Verifies the ledger (every receipt, its signature, its chain position, every budget; a process
  that spends again verifies only the receipts appended since its last spend),
  verifies the chain at the spend's time, refuses a spend that would take any grant on the chain
  past its budget (Overspend), and otherwise appends a receipt signed by the host key. The ledger
  is an append-only log (a folder, created when missing; one fsynced file per receipt, never
  rewritten): the receipt claims the head it was built against, and when a concurrent spend claimed
  it first, the spend is rebuilt from the new head (budgets checked again), so concurrent spends
  never lose a debit nor pass a budget (jcp §4.3).
  --host-key FILE     the metering host's key file (signs the receipt; trusted for the replay)
  --chain CHAINFILE   the grant chain spent under (root first); its leaf is debited with its ancestors
  --ledger DIR        the ledger (an append-only log folder)
  --uj AMOUNT         microjoules spent, or joules with a J suffix
  --calls N           calls used (default 1);  --wall-ms N   wall milliseconds used (default 0)
  --root DID          a trusted root issuer (repeatable)
  --host DID          a further metering host whose receipts the ledger may hold (repeatable)
  --at TIME           time of the spend: epoch ms or ISO 8601 (default: now)
  --revocations FILE  a revocation list file
  --json              print {receipts, remaining budgets, retries}
${STORE_HELP}
exit: 0 recorded, 1 refused (Overspend, Expired, Revoked, …) or the ledger does not verify, 2 usage error`;

/** How many times a spend is rebuilt after losing the head to another writer before it gives up. */
const MAX_RETRIES = 10_000;

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
        store: { type: "string" },
      },
      false,
    );
    if (!v["host-key"] || !v.chain || !v.ledger || !v.uj || !v.root?.length)
      throw new UsageError("--host-key, --chain, --ledger, --uj and --root are required");
    const host = readKey(v["host-key"]);
    const chain = readChain(v.chain);
    const url = sharedUrl(v.store);
    const revocations = url === undefined ? readList(v.revocations) : undefined;
    const opts = {
      roots: v.root.map(principal),
      hosts: [host.did, ...(v.host ?? []).map(principal)],
      ...(revocations ? { revocations } : {}),
      cache: new GrantCache(), // a retry re-verifies receipts and budgets, not the same grants' signatures
    };
    const calls = countArg(v.calls, "calls");
    const wall_ms = countArg(v["wall-ms"], "wall-ms");
    const req = {
      uj: amountArg(v.uj, "uj") ?? "0",
      ...(calls !== undefined ? { calls } : {}),
      ...(wall_ms !== undefined ? { wall_ms } : {}),
    };
    if (url !== undefined)
      return spendSharedCommand(
        {
          url,
          ledger: v.ledger,
          revocations: v.revocations,
          chain,
          host,
          req,
          opts,
          atMs: () => timeArg(v.at, "at"),
          json: v.json === true,
        },
        io,
      ).then(() => EXIT.ok);
    // Without --at the spend's time is now, taken after the ledger was read (every receipt in it
    // took its time before it was appended, so before this read) and again on a retry: a leaf's
    // receipt times never go back.
    const { state, retries } = spendOn(
      v.ledger,
      chain,
      host,
      req,
      opts,
      () => timeArg(v.at, "at"),
      MAX_RETRIES,
    );
    const ledger = state.ledger;
    const remaining = Object.fromEntries(ledger.remaining());
    if (v.json) printJson(io, { receipts: ledger.count, remaining, retries });
    else {
      io.out(`spend recorded (receipt ${ledger.count}); remaining:`);
      for (const [a, r] of ledger.remaining())
        io.out(
          `  ${a}  ${r.uj} µJ${r.calls === null ? "" : `, ${r.calls} calls`}${r.wall_ms === null ? "" : `, ${r.wall_ms} ms`}`,
        );
    }
    return Promise.resolve(EXIT.ok);
  },
};
