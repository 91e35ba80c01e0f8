// `jcp inspect`: show what a chain file holds, grant by grant, without trusting it.
import { payloadOf, envelopeAddress, type Envelope } from "@sbx/wire";
import { isJcpError, resolveChain } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { grantJson, principal, readChain } from "./lib/files.ts";
import { ledgerReport } from "@sbx/host/ledger";
import { grantRows, renderTable, type GrantRow } from "./lib/table.ts";

const help = `usage: jcp inspect CHAINFILE [--ledger DIR --host DID…] [--json]
  Prints the chain (root first) as a table of its effective grants (omitted fields inherited): issuer
  → holder, scopes, budget, spent, remaining, expiry; then each grant's address and payload as
  signed. Spent and remaining come from --ledger, replayed whole with the chain's own root issuer
  and the --host metering hosts (without it they are "-"). This trusts no root and checks no time:
  use jcp verify for a verdict.
  --ledger DIR  a spend ledger (jcp spend's folder) to read spent and remaining from
  --host DID    a metering host whose receipts the ledger holds (repeatable; needed with --ledger)
  --json   print {grants: [{address, payload}], effective: [...] | null, table: [{address, issuer,
           holder, scopes, budget_uj, spent_uj, remaining_uj, expires}] | null, problem: code | null}
exit: 0 printed (even for a chain that does not resolve), 2 unreadable file`;

function decode(e: Envelope): { address: string; payload: unknown } {
  try {
    return { address: envelopeAddress(e), payload: payloadOf(e) };
  } catch {
    throw new UsageError("the chain file holds something that is not a decodable envelope");
  }
}

export const command: Command = {
  name: "inspect",
  summary: "show the grants of a chain file and their effective values",
  help,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      json: { type: "boolean" },
      ledger: { type: "string" },
      host: { type: "string", multiple: true },
    });
    if (values.ledger !== undefined && !values.host?.length)
      throw new UsageError("--ledger needs --host (its metering hosts)");
    if (positionals.length !== 1) throw new UsageError("give one CHAINFILE");
    const chain = readChain(positionals[0]!);
    const grants = chain.map(decode);
    let effective = null;
    let table: GrantRow[] | null = null;
    let problem: string | null = null;
    try {
      const resolved = resolveChain(chain);
      effective = resolved.map(grantJson);
      const hosts = (values.host ?? []).map(principal);
      const roots = resolved[0] ? [resolved[0].issuer] : [];
      const ledger =
        values.ledger === undefined ? null : ledgerReport(values.ledger, resolved, { roots, hosts });
      table = grantRows(resolved, ledger);
    } catch (e) {
      if (!isJcpError(e)) throw e;
      problem = e.code;
    }
    if (values.json) {
      printJson(io, { grants, effective, table, problem });
      return Promise.resolve(EXIT.ok);
    }
    if (table) for (const l of renderTable(table)) io.out(l);
    else io.out(`the chain does not resolve: ${problem ?? ""}`);
    grants.forEach((g, i) => io.out(`[${i}] ${g.address}\n    ${JSON.stringify(g.payload)}`));
    return Promise.resolve(EXIT.ok);
  },
};
