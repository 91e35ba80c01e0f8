// `jcp verify`: verify a chain file to trusted roots at a given time (jcp §4.4), with revocations (§4.5).
import { isJcpError, verifyChain } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { TRUST_HELP, TRUST_OPTIONS, trustOf, verdict } from "../../trust.ts";
import { grantJson, grantLine, principal, readChain, readList, rootsOf, timeArg } from "./lib/files.ts";
import { ledgerReport, ledgerReportOf, type LedgerReport } from "@sbx/host/ledger";
import { readSharedLedger, sharedUrl, STORE_HELP } from "./lib/shared.ts";

const help = `usage: jcp verify CHAINFILE (--trust DID|KEYFILE… | --any-signer) [--at TIME] [--revocations FILE] [--json]
  Verifies a chain (root first): every signature, every link, containment of each child in its
  parent, the root issuer among the trusted roots, revocation, and the time (jcp §4.4). With
  --any-signer the chain is checked from whatever key signed its root, and the verdict is UNTRUSTED,
  naming that issuer. A chain file above 16 MiB is refused before it is read (§2.9).
${TRUST_HELP}
  --root DID          the same as --trust (older name): a trusted root issuer
  --at TIME           verify as of this time: epoch ms or ISO 8601 (default: now)
  --revocations FILE  a revocation list file (jcp revoke writes one)
  --ledger DIR        also replay this spend ledger whole (jcp §4.3) and print what each grant of
                      the chain has spent and has left (--json: ledger {receipts, spent_uj, grants})
  --host DID          a trusted metering host of --ledger (repeatable; required with --ledger)
  --json              print {valid, trusted, root, code, grants}
${STORE_HELP}
exit: 0 valid (or UNTRUSTED with --any-signer), 1 invalid (the code names the failure: Expired,
      ScopeWidens, Revoked, UntrustedRoot, …), 2 usage error (no --trust) or unusable file`;

export const command: Command = {
  name: "verify",
  summary: "verify a grant chain to trusted roots at a time (§4.4)",
  help,
  async run(args, io) {
    const { values: v, positionals } = parseOptions(args, {
      store: { type: "string" },
      root: { type: "string", multiple: true },
      at: { type: "string" },
      revocations: { type: "string" },
      json: { type: "boolean" },
      ledger: { type: "string" },
      host: { type: "string", multiple: true },
      ...TRUST_OPTIONS,
    });
    if (positionals.length !== 1) throw new UsageError("give one CHAINFILE");
    const trust = trustOf(v, v.root);
    const chain = readChain(positionals[0]!);
    // With --store, --ledger and --revocations name logs in the database, read (and verified) first.
    const url = sharedUrl(v.store);
    const shared = url === undefined ? null : await readSharedLedger(url, v.ledger, v.revocations);
    const revocations = shared !== null ? shared.revocations : readList(v.revocations);
    const at_ms = timeArg(v.at, "at");
    if (v.ledger !== undefined && !v.host?.length)
      throw new UsageError("--ledger needs --host (its metering hosts)");
    try {
      const r = verifyChain(chain, {
        roots: rootsOf(trust, chain),
        at_ms,
        ...(revocations ? { revocations } : {}),
      });
      const root = r.grants[0]?.issuer ?? null;
      const trusted = trust.keys !== null;
      const roots = rootsOf(trust, chain);
      const hosts = (v.host ?? []).map(principal);
      const ledger: LedgerReport | null =
        v.ledger === undefined
          ? null
          : shared?.ledger
            ? ledgerReportOf(shared.ledger, r.grants, {
                roots,
                hosts,
                ...(revocations ? { revocations } : {}),
              })
            : ledgerReport(v.ledger, r.grants, { roots, hosts, ...(revocations ? { revocations } : {}) });
      const more = ledger ? { ledger } : {};
      if (v.json)
        printJson(io, {
          valid: true,
          trusted,
          root,
          code: null,
          at_ms,
          grants: r.grants.map(grantJson),
          ...more,
        });
      else {
        io.out(
          `${trusted ? "valid" : `${verdict(trust)} (root issuer ${root ?? "?"} not checked against a trust set)`} at ${new Date(at_ms).toISOString()}: ${r.grants.length} grant(s); leaf ${grantLine(r.leaf)}`,
        );
        if (ledger) {
          io.out(`ledger: ${ledger.receipts} receipt(s); the leaf spent ${ledger.spent_uj} µJ`);
          for (const g of ledger.grants)
            io.out(`  ${g.address}  spent ${g.spent_uj} of ${g.budget_uj} µJ, ${g.remaining_uj} left`);
        }
      }
      return EXIT.ok;
    } catch (e) {
      if (!isJcpError(e)) throw e;
      if (v.json)
        printJson(io, { valid: false, trusted: false, root: null, code: e.code, at_ms, grants: null });
      else io.out(`invalid: ${e.message}`);
      return EXIT.invalid;
    }
  },
};
