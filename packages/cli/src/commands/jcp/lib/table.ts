// `jcp inspect`'s table: one row per grant of a chain, root first — issuer → holder, scopes, budget,
// spent, remaining, expiry — so a person can read a token at a glance (jcp §4.1–§4.3).
import type { EffectiveGrant } from "@sbx/jcp-grant/grant";
import type { LedgerReport } from "@sbx/host/ledger";

/** One row of the table, as --json prints it. */
export interface GrantRow {
  readonly address: string;
  readonly issuer: string;
  readonly holder: string;
  readonly scopes: string;
  readonly budget_uj: string;
  readonly spent_uj: string | null;
  readonly remaining_uj: string | null;
  readonly expires: string;
}

const short = (did: string) => (did.length > 20 ? `${did.slice(0, 14)}…${did.slice(-4)}` : did);

/** grantRows builds the rows of `chain`, with spent and remaining from `ledger` when one was read. */
export function grantRows(chain: readonly EffectiveGrant[], ledger: LedgerReport | null): GrantRow[] {
  return chain.map((g, i) => {
    const s = ledger?.grants[i];
    return {
      address: g.address,
      issuer: g.issuer,
      holder: g.holder,
      scopes: `${g.scope.resources.join(" ")} [${g.scope.actions.join(",")}]`,
      budget_uj: g.budget.uj.toString(),
      spent_uj: s?.spent_uj ?? null,
      remaining_uj: s?.remaining_uj ?? null,
      expires: new Date(g.exp_ms).toISOString(),
    };
  });
}

/** renderTable lays the rows out in aligned columns (a header, then one line per grant). */
export function renderTable(rows: readonly GrantRow[]): string[] {
  const head = ["#", "issuer → holder", "scopes", "budget µJ", "spent µJ", "remaining µJ", "expires"];
  const cells = rows.map((r, i) => [
    String(i),
    `${short(r.issuer)} → ${short(r.holder)}`,
    r.scopes,
    r.budget_uj,
    r.spent_uj ?? "-",
    r.remaining_uj ?? "-",
    r.expires,
  ]);
  const widths = head.map((h, c) => Math.max(h.length, ...cells.map((row) => row[c]!.length)));
  const line = (row: readonly string[]) =>
    row
      .map((x, c) => x.padEnd(widths[c]!))
      .join("  ")
      .trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)];
}
