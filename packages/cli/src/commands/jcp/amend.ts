// `jcp amend`: the issuer of a grant appends a signed amendment that tightens it (jcp §4.7).
import type { AmendmentSet } from "@sbx/jcp-grant/checkpoint";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { readKey } from "@sbx/host/keys";
import { amountArg, countArg, grantJson, grantLine, readChain, sortedSet, timeArg } from "./lib/files.ts";
import { appendCheckpoint } from "@sbx/host/ledger";

const help = `usage: jcp amend --key FILE --chain CHAINFILE --log DIR [--resource PATTERN…] [--action NAME…]
                 [--uj AMOUNT] [--calls N] [--wall-ms N] [--exp TIME] [--depth N] [--at TIME] [--json]
  Appends the issuer's signed amendment to the checkpoint log of the last grant in CHAINFILE
  (jcp §4.7, an append-only folder), answering the latest checkpoint; appended on the head it
  verified (a concurrent entry makes it verify and sign again). Each option given replaces that member of the grant in
  force; it may only tighten, and the budget may not go below what the latest checkpoint has spent.
  --key FILE   the grant's issuer's key (the holder's key is refused: SeparationOfDuties)
exit: 0 amended, 1 refused (SeparationOfDuties, AmendmentWidens, BudgetBelowSpent, NotAmendable, …),
      2 usage error`;

function setOf(v: Record<string, string | string[] | boolean | undefined>): AmendmentSet {
  const s = (k: string) => v[k] as string | undefined;
  const resources = sortedSet(v.resource as string[] | undefined);
  const actions = sortedSet(v.action as string[] | undefined);
  const uj = amountArg(s("uj"), "uj");
  const calls = countArg(s("calls"), "calls");
  const wall_ms = countArg(s("wall-ms"), "wall-ms");
  const depth = countArg(s("depth"), "depth");
  const set: AmendmentSet = {
    ...(resources ? { resources } : {}),
    ...(actions ? { actions } : {}),
    ...(uj !== undefined ? { uj } : {}),
    ...(calls !== undefined ? { calls } : {}),
    ...(wall_ms !== undefined ? { wall_ms } : {}),
    ...(s("exp") !== undefined ? { exp_ms: timeArg(s("exp"), "exp") } : {}),
    ...(depth !== undefined ? { depth } : {}),
  };
  if (Object.keys(set).length === 0) throw new UsageError("an amendment sets at least one member");
  return set;
}

export const command: Command = {
  name: "amend",
  summary: "tighten a grant you issued, in its checkpoint log (§4.7)",
  help,
  run(args, io) {
    const { values: v } = parseOptions(
      args,
      {
        key: { type: "string" },
        chain: { type: "string" },
        log: { type: "string" },
        resource: { type: "string", multiple: true },
        action: { type: "string", multiple: true },
        uj: { type: "string" },
        calls: { type: "string" },
        "wall-ms": { type: "string" },
        exp: { type: "string" },
        depth: { type: "string" },
        at: { type: "string" },
        json: { type: "boolean" },
      },
      false,
    );
    if (!v.key || !v.chain || !v.log) throw new UsageError("--key, --chain and --log are required");
    const set = setOf(v);
    const key = readKey(v.key);
    const at = v.at === undefined ? undefined : timeArg(v.at, "at");
    const { log } = appendCheckpoint(v.log, readChain(v.chain), (l) => l.amend(key, set, at ?? Date.now()));
    if (v.json) printJson(io, { head: log.head, length: log.length, grant: grantJson(log.effective) });
    else io.out(`amendment ${log.amendments} appended; in force:\n  ${grantLine(log.effective)}`);
    return Promise.resolve(EXIT.ok);
  },
};
