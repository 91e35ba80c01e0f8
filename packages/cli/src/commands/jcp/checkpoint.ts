// `jcp checkpoint` and `jcp checkpoint verify`: the holder appends a signed checkpoint of its state to
// a grant's checkpoint log; anyone verifies the log and prints the grant in force (jcp §4.7).
import { isDigest, parseAmount, type Digest, type Envelope } from "@sbx/wire";
import { CheckpointLog } from "@sbx/jcp-grant/checkpoint";
import { verifyChain } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { readKey } from "@sbx/host/keys";
import { hashInput } from "@sbx/host/files";
import { TRUST_HELP, TRUST_OPTIONS, trustOf, verdict } from "../../trust.ts";

import { countArg, grantJson, grantLine, readChain, rootsOf, timeArg } from "./lib/files.ts";
import { appendCheckpoint, readCheckpointLog } from "@sbx/host/ledger";

/**
 * readLog reads a checkpoint log's entries: an append-only folder (jcp §4.7 storage), or the JSON
 * list file of an older jcp (read only); missing means empty.
 */
export function readLog(path: string): Envelope[] {
  return readCheckpointLog(path).entries;
}

function stateOf(v: { state?: string; "state-file"?: string }): Digest {
  if (v.state !== undefined && v["state-file"] !== undefined)
    throw new UsageError("give one of --state and --state-file");
  if (v.state !== undefined) {
    if (!isDigest(v.state)) throw new UsageError("--state is a blake3:… digest");
    return v.state;
  }
  if (v["state-file"] === undefined) throw new UsageError("--state or --state-file is required");
  return hashInput(v["state-file"], "state file");
}

const help = `usage: jcp checkpoint --key FILE --chain CHAINFILE --log DIR (--state DIGEST | --state-file FILE)
                      [--spent-uj AMOUNT] [--spent-calls N] [--spent-wall-ms N] [--at TIME] [--json]
  Appends the holder's signed checkpoint to the checkpoint log of the last grant in CHAINFILE
  (jcp §4.7): the state's digest, what has been spent so far, and every amendment seen so far. The
  log (an append-only folder, created when missing) is verified first, and the checkpoint is
  appended on the head verified (a concurrent entry makes it verify and sign again).
exit: 0 appended, 1 refused (NotHolder, NotAmendable, BrokenCheckpointLog, …), 2 usage error`;

const verifyHelp = `usage: jcp checkpoint verify --chain CHAINFILE --log DIR|FILE (--trust DID|KEYFILE… | --any-signer)
                             [--at TIME] [--json]
  Verifies a grant's checkpoint log (jcp §4.7): every checkpoint and amendment, and the chain at
  --at to a trusted root under the grant in force; prints the grant in force: the original with
  every amendment applied in order. With --any-signer the chain is checked from whatever key signed
  its root and the verdict is UNTRUSTED.
${TRUST_HELP}
  --root DID   the same as --trust (older name): a trusted root issuer
exit: 0 valid (or UNTRUSTED with --any-signer), 1 invalid (its code is printed), 2 usage error`;

const append: Command = {
  name: "checkpoint",
  summary: "append the holder's checkpoint to a grant's log (§4.7)",
  help,
  run(args, io) {
    const { values: v } = parseOptions(
      args,
      {
        key: { type: "string" },
        chain: { type: "string" },
        log: { type: "string" },
        state: { type: "string" },
        "state-file": { type: "string" },
        "spent-uj": { type: "string" },
        "spent-calls": { type: "string" },
        "spent-wall-ms": { type: "string" },
        at: { type: "string" },
        json: { type: "boolean" },
      },
      false,
    );
    if (!v.key || !v.chain || !v.log) throw new UsageError("--key, --chain and --log are required");
    const state = stateOf(v);
    const spentUj = v["spent-uj"] ?? "0";
    if (!/^(0|[1-9]\d*)$/.test(spentUj)) throw new UsageError("--spent-uj is microjoules");
    const spent = {
      uj: parseAmount(spentUj),
      calls: countArg(v["spent-calls"], "spent-calls") ?? 0,
      wall_ms: countArg(v["spent-wall-ms"], "spent-wall-ms") ?? 0,
    };
    const key = readKey(v.key);
    const at = v.at === undefined ? undefined : timeArg(v.at, "at");
    const { log } = appendCheckpoint(v.log, readChain(v.chain), (l) =>
      l.checkpoint(key, { state, spent, at_ms: at ?? Date.now() }),
    );
    if (v.json) printJson(io, { head: log.head, length: log.length, amendments: log.amendments });
    else
      io.out(
        `checkpoint ${log.length} appended (acknowledges ${log.amendments} amendments), head ${log.head}`,
      );
    return Promise.resolve(EXIT.ok);
  },
};

const verify: Command = {
  name: "checkpoint verify",
  summary: "verify a checkpoint log and print the grant in force (§4.7)",
  help: verifyHelp,
  run(args, io) {
    const { values: v } = parseOptions(
      args,
      {
        chain: { type: "string" },
        log: { type: "string" },
        root: { type: "string", multiple: true },
        at: { type: "string" },
        json: { type: "boolean" },
        ...TRUST_OPTIONS,
      },
      false,
    );
    if (!v.chain || !v.log) throw new UsageError("--chain and --log are required");
    const trust = trustOf(v, v.root);
    const chain = readChain(v.chain);
    const log = CheckpointLog.replay(chain, readLog(v.log));
    const roots = rootsOf(trust, chain);
    verifyChain(chain, { roots, at_ms: timeArg(v.at, "at"), effective: log.hook() });
    const g = log.effective;
    const trusted = trust.keys !== null;
    if (v.json)
      printJson(io, {
        valid: true,
        trusted,
        root: roots[0] ?? null,
        head: log.head,
        length: log.length,
        amendments: log.amendments,
        grant: grantJson(g),
      });
    else
      io.out(
        `${trusted ? "valid" : `${verdict(trust)} (root issuer ${roots[0] ?? "?"} not checked against a trust set)`} checkpoint log: ${log.length} entries, ${log.amendments} amendments; in force:\n  ${grantLine(g)}`,
      );
    return Promise.resolve(EXIT.ok);
  },
};

export const commands: Command[] = [append, verify];
