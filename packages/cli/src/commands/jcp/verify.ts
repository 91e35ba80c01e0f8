// `jcp verify`: verify a chain file to trusted roots at a given time (jcp §4.4), with revocations (§4.5).
import { isJcpError, verifyChain } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { grantJson, grantLine, principal, readChain, readList, timeArg } from "./lib/files.ts";

const help = `usage: jcp verify CHAINFILE --root DID|KEYFILE… [--at TIME] [--revocations FILE] [--json]
  Verifies a chain (root first): every signature, every link, containment of each child in its
  parent, the root issuer among the trusted roots, revocation, and the time (jcp §4.4).
  --root DID          a trusted root issuer (repeatable; a key file's did:key may be given)
  --at TIME           verify as of this time: epoch ms or ISO 8601 (default: now)
  --revocations FILE  a revocation list file (jcp revoke writes one)
  --json              print {valid, code, grants}
exit: 0 valid, 1 invalid (the code names the failure: Expired, ScopeWidens, Revoked, …), 2 usage error`;

export const command: Command = {
  name: "verify",
  summary: "verify a grant chain to trusted roots at a time (§4.4)",
  help,
  run(args, io) {
    const { values: v, positionals } = parseOptions(args, {
      root: { type: "string", multiple: true },
      at: { type: "string" },
      revocations: { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length !== 1) throw new UsageError("give one CHAINFILE");
    if (!v.root?.length) throw new UsageError("at least one --root is required");
    const chain = readChain(positionals[0]!);
    const revocations = readList(v.revocations);
    const at_ms = timeArg(v.at, "at");
    try {
      const r = verifyChain(chain, {
        roots: v.root.map(principal),
        at_ms,
        ...(revocations ? { revocations } : {}),
      });
      if (v.json) printJson(io, { valid: true, code: null, at_ms, grants: r.grants.map(grantJson) });
      else
        io.out(
          `valid at ${new Date(at_ms).toISOString()}: ${r.grants.length} grant(s); leaf ${grantLine(r.leaf)}`,
        );
      return Promise.resolve(EXIT.ok);
    } catch (e) {
      if (!isJcpError(e)) throw e;
      if (v.json) printJson(io, { valid: false, code: e.code, at_ms, grants: null });
      else io.out(`invalid: ${e.message}`);
      return Promise.resolve(EXIT.invalid);
    }
  },
};
