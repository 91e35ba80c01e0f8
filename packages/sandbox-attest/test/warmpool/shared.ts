// Warm-pool test helpers: a pool with items provisioned, accrued, claimed and evicted through the
// writer, and a forger that signs entries without the writer's checks (to build broken ledgers).
import { addressOf, chainNext, signPayload, testKey, type Digest, type KeyPair } from "@sbx/wire";
import { estimateCpu, estimateMemory, estimateStorage } from "../../src/energy/model.ts";
import type { EnergyComponent } from "../../src/energy/types.ts";
import {
  appendEntry,
  claimBody,
  closeBody,
  createPool,
  evictBody,
  POOL_ENTRY_PAYLOAD_TYPE,
  type LedgerState,
} from "@sbx/sandbox-attest/warmpool";

export const host = testKey("host");
export const manifest: Digest = addressOf({ manifest: "demo" });
export const unit: Digest = addressOf({ unit: "u" });
export const grants: Digest = addressOf({ grants: "g" });
export const T0 = 1_700_000_000_000;

/** provisionFigure is the provisioning energy of one item: CPU time spent creating it. */
export function provisionFigure(cpuUs: bigint): EnergyComponent[] {
  return [estimateCpu(cpuUs, { source: "proc:self/stat" })];
}

/** residencyFigure is what a paused item draws over `ms`: resident memory and retained storage. */
export function residencyFigure(ms: number, rssKib = 2048n, storageMib = 1n): EnergyComponent[] {
  return [
    estimateMemory(rssKib * BigInt(ms), { source: "proc:status VmRSS" }),
    estimateStorage((storageMib * BigInt(ms)) / 1000n, { source: "fs:workspace" }),
  ];
}

/** newPool returns an empty pool ledger. */
export function newPool(): LedgerState {
  return createPool({ name: "p", manifest, created_ms: T0 }, host);
}

/** validPool: three items provisioned; a claimed after 10 s, b evicted after 20 s, c still resident. */
export function validPool(close = false): LedgerState {
  const s = newPool();
  for (const [i, item] of ["a", "b", "c"].entries())
    appendEntry(
      s,
      { kind: "provisioned", item, manifest, at_ms: T0 + i, provision: provisionFigure(40_000n + BigInt(i)) },
      host,
    );
  appendEntry(
    s,
    { kind: "accrued", item: "a", from_ms: T0, to_ms: T0 + 10_000, residency: residencyFigure(10_000) },
    host,
  );
  appendEntry(s, claimBody(s, "a", unit, grants), host);
  appendEntry(
    s,
    { kind: "accrued", item: "b", from_ms: T0 + 1, to_ms: T0 + 20_000, residency: residencyFigure(19_999) },
    host,
  );
  appendEntry(s, evictBody(s, "b", "expired"), host);
  if (close) {
    appendEntry(
      s,
      { kind: "accrued", item: "c", from_ms: T0 + 2, to_ms: T0 + 30_000, residency: residencyFigure(29_998) },
      host,
    );
    appendEntry(s, evictBody(s, "c", "host-shutdown"), host);
    appendEntry(s, closeBody(s, T0 + 30_000), host);
  }
  return s;
}

/** forge signs `body` as the next entry with no accounting check, as a dishonest writer would. */
export function forge(s: LedgerState, body: Record<string, unknown>, key: KeyPair = host): void {
  const entry = { ...body, seq: s.entries.length, prev: s.head };
  s.entries.push(signPayload(POOL_ENTRY_PAYLOAD_TYPE, entry, key));
  s.head = chainNext(s.head, entry);
}

/** ledgerOf returns a state's wire form. */
export function ledgerOf(s: LedgerState): { pool: unknown; entries: unknown[] } {
  return { pool: s.pool, entries: [...s.entries] };
}
