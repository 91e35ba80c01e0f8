// `jcp revoke`: an issuer on a chain revokes a grant it issued or one below it (jcp §4.5), appending
// a signed entry to an append-only revocation list (a log folder: the entry claims the head it extends).
import { existsSync } from "node:fs";
import { addressOf, type Envelope } from "@sbx/wire";
import { isLog } from "@sbx/host/log";
import { isHostError } from "@sbx/host";
import { resolveChain, RevocationList } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { readKey } from "@sbx/host/keys";
import { readChain, timeArg } from "./lib/files.ts";
import { appendLogJson, readLogJson } from "@sbx/host/ledger";
import { CliError } from "../../errors.ts";
import { revokeShared, sharedUrl, STORE_HELP, withShared } from "./lib/shared.ts";

const help = `usage: jcp revoke --key FILE --chain CHAINFILE --list DIR [--target ADDRESS] [--at TIME] [--json]
  Revokes the last grant of CHAINFILE (or the grant at ADDRESS on it) and everything below it,
  by appending an entry signed with the key to the revocation list DIR (created when missing). The
  list is an append-only log folder: the entry claims the head it was built against, and when a
  concurrent revoke claimed it first, the entry is rebuilt on the new head (jcp §4.3, §4.5).
  The key must be the issuer of the target or of a grant above it (jcp §4.5); otherwise refused.
  --key FILE        the revoker's key file
  --chain CHAINFILE the chain holding the grant to revoke (root first)
  --list DIR        the revocation list (an append-only log folder)
  --target ADDRESS  revoke this grant of the chain instead of its leaf
  --at TIME         from when the revocation holds: epoch ms or ISO 8601 (default: now)
  --json            print {revoked, head, length}
${STORE_HELP}
exit: 0 appended, 1 refused (NotAuthorized, or the list does not verify), 2 usage error`;

export const command: Command = {
  name: "revoke",
  summary: "revoke a grant and its descendants (§4.5)",
  help,
  run(args, io) {
    const { values: v } = parseOptions(
      args,
      {
        key: { type: "string" },
        chain: { type: "string" },
        list: { type: "string" },
        target: { type: "string" },
        at: { type: "string" },
        json: { type: "boolean" },
        store: { type: "string" },
      },
      false,
    );
    if (!v.key || !v.chain || !v.list) throw new UsageError("--key, --chain and --list are required");
    let chain = readChain(v.chain);
    if (v.target !== undefined) {
      const i = resolveChain(chain).findIndex((g) => g.address === v.target);
      if (i < 0) throw new UsageError(`${v.target} is not a grant of ${v.chain}`);
      chain = chain.slice(0, i + 1);
    }
    const url = sharedUrl(v.store);
    const path = v.list;
    if (url !== undefined) {
      const revoked = resolveChain(chain).at(-1)?.address ?? addressOf(null);
      const key = readKey(v.key);
      const at = timeArg(v.at, "at");
      const c = chain;
      return withShared(url, (logs) => revokeShared(logs, path, c, key, at)).then(({ list, entry }) => {
        if (v.json) printJson(io, { revoked, head: list.head, length: list.length, entry });
        else
          io.out(
            `revoked ${revoked} and everything below it\n  list ${path}: ${list.length} entr${list.length === 1 ? "y" : "ies"}, head ${list.head}`,
          );
        return EXIT.ok;
      });
    }
    if (existsSync(path) && !isLog(path))
      throw new CliError(
        "BadLedger",
        `${path} is a file: a revocation list is now an append-only folder (jcp §4.5); give a new path`,
      );
    const key = readKey(v.key);
    let list: RevocationList;
    let entry: Envelope;
    for (let retries = 0; ; retries++) {
      const { values, head } = readLogJson(path);
      list = RevocationList.verify(values);
      entry = list.revoke(chain, key, timeArg(v.at, "at"));
      try {
        appendLogJson(path, head, entry);
        break;
      } catch (e) {
        if (!isHostError(e, "StaleHead") || retries >= 10_000) throw e;
      }
    }
    const revoked = resolveChain(chain).at(-1)?.address ?? addressOf(null);
    if (v.json) printJson(io, { revoked, head: list.head, length: list.length, entry });
    else
      io.out(
        `revoked ${revoked} and everything below it\n  list ${v.list}: ${list.length} entr${list.length === 1 ? "y" : "ies"}, head ${list.head}`,
      );
    return Promise.resolve(EXIT.ok);
  },
};
