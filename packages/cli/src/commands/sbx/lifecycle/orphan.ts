// §13.7.4 A run whose supervisor died: what `sbx suspend`, `sbx close` and `sbx resume` do first,
// under the run's lock. The recovery itself (the interval attested as a recovered one, the
// workspace written back) lives in @sbx/host/durable (packages/host/src/durable/recover.ts); the
// CLI chooses the key the recovered interval is signed with (runkey.ts), the one the run signs
// with on this host, resolved only when there is an interval to sign.
import type { Digest } from "@sbx/wire";
import { recoverRun as recoverRunWith, type Recovered, type RunPaths } from "@sbx/host/durable";
import type { RunStore } from "@sbx/host/stores";
import { runKeyOf } from "./runkey.ts";

/** recoverRun: @sbx/host/durable recoverRun, signing with the run's key on this host (runKeyOf). */
export function recoverRun(
  store: RunStore,
  id: Digest,
  paths: RunPaths,
  say: (line: string) => void,
): Promise<Recovered | null> {
  return recoverRunWith(store, id, paths, () => runKeyOf(store.root, paths, id, undefined, say).key, say);
}
