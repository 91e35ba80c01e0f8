// The C20 op (jcp §4.6): a mint ledger verified against its policy and held grant.
import { verifyMintLedger } from "@sbx/jcp-grant/standing";
import type { Handler } from "../../types.ts";
import { list, obj } from "../input.ts";

/** standing.verify: policy, held chain, roots, entries, events, children → the ledger's summary. */
export const standingVerify: Handler = (i) => {
  const o = obj(i);
  const s = verifyMintLedger({
    policy: o.policy,
    held: list(o.held),
    roots: list(o.roots) as string[],
    entries: list(o.entries),
    events: list(o.events),
    children: list(o.children),
  });
  return {
    policy: s.policy,
    head: s.head,
    length: s.length,
    total_uj: s.total_uj.toString(),
    children: [...s.children],
  };
};
