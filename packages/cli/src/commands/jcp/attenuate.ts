// `jcp attenuate`: the holder of a grant signs a narrower child (jcp §4.4) and writes the longer chain.
import { attenuate, resolveChain } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { readKey } from "@sbx/host/keys";
import { GRANT_OPTIONS, grantFields } from "./lib/fields.ts";
import { grantJson, grantLine, principal, readChain, writeJson } from "./lib/files.ts";

const help = `usage: jcp attenuate --key FILE --parent CHAINFILE --holder DID|KEYFILE [--resource PATTERN…]
                     [--action NAME…] [--uj AMOUNT] [--calls N] [--wall-ms N] [--nbf TIME]
                     [--exp TIME | --ttl MS] [--depth N] --out FILE [--json]
  Signs a child of the last grant in CHAINFILE with the key of that grant's holder, and writes the
  parent chain plus the child to FILE. Anything left out is inherited from the parent; nothing may
  widen: a wider scope, a larger budget, a longer window or no depth left is refused (jcp §4.4).
  --key FILE          the parent grant's holder's key file
  --parent CHAINFILE  the chain the child extends (root first)
  --holder DID        who receives the child (a did:key, or a key file whose did:key is meant)
  --resource, --action, --uj, --calls, --wall-ms, --nbf, --exp, --ttl, --depth   as in jcp issue
  --json              print the child's effective grant as JSON
exit: 0 issued, 1 refused (ScopeWidens, BudgetExceeds, WindowWidens, DepthExhausted, NotHolder, …),
      2 usage error`;

export const command: Command = {
  name: "attenuate",
  summary: "sign a narrower child of a grant you hold (§4.4)",
  help,
  run(args, io) {
    const { values: v } = parseOptions(
      args,
      {
        ...GRANT_OPTIONS,
        parent: { type: "string" },
      },
      false,
    );
    if (!v.key || !v.parent || !v.holder || !v.out)
      throw new UsageError("--key, --parent, --holder and --out are required");
    const parent = readChain(v.parent);
    const child = attenuate(parent, readKey(v.key), grantFields(v, principal(v.holder), "optional"));
    const chain = [...parent, child];
    const grants = resolveChain(chain);
    writeJson(v.out, chain);
    const g = grants[grants.length - 1]!;
    if (v.json) printJson(io, { out: v.out, grant: grantJson(g) });
    else
      io.out(`issued child grant (link ${chain.length} of the chain) ${grantLine(g)}\n  written to ${v.out}`);
    return Promise.resolve(EXIT.ok);
  },
};
