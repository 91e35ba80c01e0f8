// `jcp issue`: sign a root grant (jcp §4.1) and write it as a one-grant chain file.
import { issueGrant, resolveChain } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { readKey } from "../../keyfile.ts";
import {
  amountArg,
  countArg,
  grantJson,
  grantLine,
  principal,
  sortedSet,
  timeArg,
  writeJson,
} from "./lib/files.ts";

const help = `usage: jcp issue --key FILE --holder DID|KEYFILE --resource PATTERN… --action NAME… --uj AMOUNT
                 --depth N (--exp TIME | --ttl MS) [--nbf TIME] [--calls N] [--wall-ms N] --out FILE [--json]
  Signs a root grant (jcp §4.1) with the issuer key and writes it to FILE as a chain file (a JSON
  list of grant envelopes, root first). Verifiers must list the issuer's did:key as a trusted root.
  --key FILE          the root issuer's key file
  --holder DID        who receives the grant (a did:key, or a key file whose did:key is meant)
  --resource PATTERN  a resource pattern (§4.2), e.g. /fs/work/** (repeatable)
  --action NAME       an action, e.g. read (repeatable)
  --uj AMOUNT         the budget in microjoules, or joules with a J suffix (5J)
  --calls N, --wall-ms N   optional further limits (unlimited when left out)
  --depth N           how many delegation levels may follow (0–15)
  --nbf TIME, --exp TIME   validity window: epoch ms or ISO 8601 (nbf defaults to now)
  --ttl MS            expiry as milliseconds from now, instead of --exp
  --json              print the effective grant as JSON
exit: 0 issued, 1 refused (the code says why), 2 usage error`;

export const command: Command = {
  name: "issue",
  summary: "sign a root grant with a joule budget (§4.1)",
  help,
  run(args, io) {
    const { values: v } = parseOptions(
      args,
      {
        key: { type: "string" },
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
    if (!v.key || !v.holder || !v.out || !v.uj || v.depth === undefined)
      throw new UsageError("--key, --holder, --uj, --depth and --out are required");
    const resources = sortedSet(v.resource);
    const actions = sortedSet(v.action);
    if (!resources || !actions) throw new UsageError("at least one --resource and one --action are required");
    const now = Date.now();
    const ttl = countArg(v.ttl, "ttl");
    if ((v.exp === undefined) === (ttl === undefined))
      throw new UsageError("give exactly one of --exp and --ttl");
    const calls = countArg(v.calls, "calls");
    const wall_ms = countArg(v["wall-ms"], "wall-ms");
    const env = issueGrant(readKey(v.key), {
      holder: principal(v.holder),
      resources,
      actions,
      uj: amountArg(v.uj, "uj") ?? "0",
      ...(calls !== undefined ? { calls } : {}),
      ...(wall_ms !== undefined ? { wall_ms } : {}),
      nbf_ms: timeArg(v.nbf, "nbf", now),
      exp_ms: ttl !== undefined ? now + ttl : timeArg(v.exp, "exp"),
      depth: countArg(v.depth, "depth") ?? 0,
    });
    writeJson(v.out, [env]);
    const [g] = resolveChain([env]);
    if (v.json) printJson(io, { out: v.out, grant: grantJson(g!) });
    else io.out(`issued root grant ${grantLine(g!)}\n  written to ${v.out}`);
    return Promise.resolve(EXIT.ok);
  },
};
