// The C21 op (jcp §4.7): a checkpoint log verified, and the chain verified under the grant in force.
import type { Digest } from "@sbx/wire";
import { verifyChain } from "@sbx/jcp-grant/grant";
import { CheckpointLog } from "@sbx/jcp-grant/checkpoint";
import type { Handler } from "../../types.ts";
import { list, obj } from "../input.ts";
import { effectiveJson } from "../grants/ops.ts";

/**
 * checkpoint.verify: chain, roots, at_ms, entries (the log of grant `log_of`, default the leaf),
 * optional prefix {length, head} → head, length, amendments and the chain's grants in force.
 */
export const checkpointVerify: Handler = (i) => {
  const o = obj(i);
  const chain = list(o.chain);
  const n = o.log_of === undefined ? chain.length - 1 : Number(o.log_of);
  const p = o.prefix === undefined ? undefined : obj(o.prefix);
  const log = CheckpointLog.replay(chain.slice(0, n + 1), list(o.entries), {
    ...(p ? { prefix: { length: Number(p.length), head: p.head as Digest } } : {}),
  });
  const v = verifyChain(chain, {
    roots: list(o.roots) as string[],
    at_ms: Number(o.at_ms),
    effective: log.hook(),
  });
  return {
    head: log.head,
    length: log.length,
    amendments: log.amendments,
    grants: v.grants.map(effectiveJson),
  };
};
