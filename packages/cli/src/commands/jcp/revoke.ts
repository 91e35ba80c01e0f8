// `jcp revoke`: an issuer on a chain revokes a grant it issued or one below it (jcp §4.5), appending
// a signed entry to an append-only revocation list file.
import { addressOf } from "@sbx/wire";
import { resolveChain } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { readKey } from "../../keyfile.ts";
import { readChain, readList, timeArg, writeJson } from "./lib/files.ts";

const help = `usage: jcp revoke --key FILE --chain CHAINFILE --list FILE [--target ADDRESS] [--at TIME] [--json]
  Revokes the last grant of CHAINFILE (or the grant at ADDRESS on it) and everything below it,
  by appending an entry signed with the key to the revocation list FILE (created when missing).
  The key must be the issuer of the target or of a grant above it (jcp §4.5); otherwise refused.
  --key FILE        the revoker's key file
  --chain CHAINFILE the chain holding the grant to revoke (root first)
  --list FILE       the revocation list file (a JSON list of signed entries)
  --target ADDRESS  revoke this grant of the chain instead of its leaf
  --at TIME         from when the revocation holds: epoch ms or ISO 8601 (default: now)
  --json            print {revoked, head, length}
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
    const list = readList(v.list);
    if (!list) throw new UsageError("--list is required");
    const entry = list.revoke(chain, readKey(v.key), timeArg(v.at, "at"));
    writeJson(v.list, list.entries);
    const revoked = resolveChain(chain).at(-1)?.address ?? addressOf(null);
    if (v.json) printJson(io, { revoked, head: list.head, length: list.length, entry });
    else
      io.out(
        `revoked ${revoked} and everything below it\n  list ${v.list}: ${list.length} entr${list.length === 1 ? "y" : "ies"}, head ${list.head}`,
      );
    return Promise.resolve(EXIT.ok);
  },
};
