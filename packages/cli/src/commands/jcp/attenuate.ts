// `jcp attenuate`: the holder of a grant signs a narrower child (jcp §4.4) and writes the longer chain.
import { attenuate, resolveChain, type ChildFields } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { readKey } from "../../keyfile.ts";
import {
  amountArg,
  countArg,
  grantJson,
  grantLine,
  principal,
  readChain,
  sortedSet,
  timeArg,
  writeJson,
} from "./lib/files.ts";

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

function fields(v: Record<string, string | string[] | boolean | undefined>, holder: string): ChildFields {
  const s = (k: string) => v[k] as string | undefined;
  const resources = sortedSet(v.resource as string[] | undefined);
  const actions = sortedSet(v.action as string[] | undefined);
  const uj = amountArg(s("uj"), "uj");
  const calls = countArg(s("calls"), "calls");
  const wall_ms = countArg(s("wall-ms"), "wall-ms");
  const depth = countArg(s("depth"), "depth");
  const ttl = countArg(s("ttl"), "ttl");
  if (s("exp") !== undefined && ttl !== undefined)
    throw new UsageError("give at most one of --exp and --ttl");
  const exp_ms =
    ttl !== undefined ? Date.now() + ttl : s("exp") !== undefined ? timeArg(s("exp"), "exp") : undefined;
  return {
    holder,
    ...(resources ? { resources } : {}),
    ...(actions ? { actions } : {}),
    ...(uj !== undefined ? { uj } : {}),
    ...(calls !== undefined ? { calls } : {}),
    ...(wall_ms !== undefined ? { wall_ms } : {}),
    ...(s("nbf") !== undefined ? { nbf_ms: timeArg(s("nbf"), "nbf") } : {}),
    ...(exp_ms !== undefined ? { exp_ms } : {}),
    ...(depth !== undefined ? { depth } : {}),
  };
}

export const command: Command = {
  name: "attenuate",
  summary: "sign a narrower child of a grant you hold (§4.4)",
  help,
  run(args, io) {
    const { values: v } = parseOptions(
      args,
      {
        key: { type: "string" },
        parent: { type: "string" },
        holder: { type: "string" },
        resource: { type: "string", multiple: true },
        action: { type: "string", multiple: true },
        uj: { type: "string" },
        calls: { type: "string" },
        "wall-ms": { type: "string" },
        depth: { type: "string" },
        nbf: { type: "string" },
        exp: { type: "string" },
        ttl: { type: "string" },
        out: { type: "string" },
        json: { type: "boolean" },
      },
      false,
    );
    if (!v.key || !v.parent || !v.holder || !v.out)
      throw new UsageError("--key, --parent, --holder and --out are required");
    const parent = readChain(v.parent);
    const child = attenuate(parent, readKey(v.key), fields(v, principal(v.holder)));
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
