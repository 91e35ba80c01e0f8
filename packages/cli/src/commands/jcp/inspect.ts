// `jcp inspect`: show what a chain file holds, grant by grant, without trusting it.
import { payloadOf, envelopeAddress, type Envelope } from "@sbx/wire";
import { isJcpError, resolveChain } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { grantJson, grantLine, readChain } from "./lib/files.ts";

const help = `usage: jcp inspect CHAINFILE [--json]
  Prints each grant of a chain file (root first): address, issuer, holder and the payload as signed,
  then the effective grants (omitted fields inherited) when the chain's signatures and links hold.
  This trusts no root and checks no time: use jcp verify for a verdict.
  --json   print {grants: [{address, payload}], effective: [...] | null, problem: code | null}
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
    const { values, positionals } = parseOptions(args, { json: { type: "boolean" } });
    if (positionals.length !== 1) throw new UsageError("give one CHAINFILE");
    const chain = readChain(positionals[0]!);
    const grants = chain.map(decode);
    let effective = null;
    let problem: string | null = null;
    try {
      effective = resolveChain(chain).map(grantJson);
    } catch (e) {
      if (!isJcpError(e)) throw e;
      problem = e.code;
    }
    if (values.json) {
      printJson(io, { grants, effective, problem });
      return Promise.resolve(EXIT.ok);
    }
    grants.forEach((g, i) => io.out(`[${i}] ${g.address}\n    ${JSON.stringify(g.payload)}`));
    if (problem) io.out(`the chain does not resolve: ${problem}`);
    else for (const g of resolveChain(chain)) io.out(`effective ${grantLine(g)}`);
    return Promise.resolve(EXIT.ok);
  },
};
