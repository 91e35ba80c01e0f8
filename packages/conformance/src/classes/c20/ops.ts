// The C20 op (jcp §4.6): a mint ledger verified against its policy and held grant.
import type { Json, JsonObject } from "@sbx/wire";
import { verifyMintLedger } from "@sbx/jcp-grant/standing";
import type { Handler } from "../../types.ts";

function obj(v: Json | undefined): JsonObject {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new TypeError("input must be an object");
  return v;
}
function list(v: Json | undefined): Json[] {
  if (!Array.isArray(v)) throw new TypeError("expected a list");
  return v;
}

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
