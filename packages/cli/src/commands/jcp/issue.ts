// `jcp issue`: sign a root grant (jcp §4.1) and write it as a one-grant chain file.
import { issueGrant, resolveChain } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { readKey } from "@sbx/host/keys";
import { GRANT_OPTIONS, grantFields } from "./lib/fields.ts";
import { grantJson, grantLine, principal, writeJson } from "./lib/files.ts";

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
    const { values: v } = parseOptions(args, GRANT_OPTIONS, false);
    if (!v.key || !v.holder || !v.out || !v.uj || v.depth === undefined)
      throw new UsageError("--key, --holder, --uj, --depth and --out are required");
    const now = Date.now();
    const f = grantFields(v, principal(v.holder), "required", now);
    const { resources, actions, exp_ms } = f;
    if (!resources || !actions) throw new UsageError("at least one --resource and one --action are required");
    const env = issueGrant(readKey(v.key), {
      ...f,
      resources,
      actions,
      uj: f.uj ?? "0",
      nbf_ms: f.nbf_ms ?? now,
      exp_ms: exp_ms!, // "required": grantFields refused neither --exp nor --ttl
      depth: f.depth ?? 0,
    });
    writeJson(v.out, [env]);
    const [g] = resolveChain([env]);
    if (v.json) printJson(io, { out: v.out, grant: grantJson(g!) });
    else io.out(`issued root grant ${grantLine(g!)}\n  written to ${v.out}`);
    return Promise.resolve(EXIT.ok);
  },
};
