// §15.4–§15.6 Pool accounting: the state every entry is checked against. Conservation holds after
// every entry: drawn = claimed + evicted + outstanding, and each item is attributed at most once.
import { formatAmount, parseAmount, type Amount } from "@sbx/wire";
import { SandboxAttestError, type SandboxAttestErrorCode } from "../errors.ts";
import { figureUj } from "./figure.ts";
import type {
  AccruedEntry,
  ClaimedEntry,
  ClosedEntry,
  EvictedEntry,
  PoolEntry,
  ProvisionedEntry,
} from "./types.ts";

/** Where one item stands: its energy so far and the instant up to which residency is accounted. */
export interface ItemAccount {
  readonly item: string;
  state: "resident" | "claimed" | "evicted";
  readonly provisioned_ms: number;
  provision: bigint;
  residency: bigint;
  accounted_to_ms: number;
}

/** The pool's accounting after a prefix of its ledger. */
export interface PoolAccount {
  readonly manifest: string;
  readonly items: Map<string, ItemAccount>;
  drawn: bigint;
  claimed: bigint;
  evicted: bigint;
  last_ms: number;
  closed: boolean;
}

/** newAccount starts the accounting of a pool created at `created_ms` from `manifest`. */
export function newAccount(manifest: string, created_ms: number): PoolAccount {
  return {
    manifest,
    items: new Map(),
    drawn: 0n,
    claimed: 0n,
    evicted: 0n,
    last_ms: created_ms,
    closed: false,
  };
}

function fail(code: SandboxAttestErrorCode, msg: string): never {
  throw new SandboxAttestError(code, msg);
}

function entryTime(e: PoolEntry): number {
  return e.kind === "accrued" ? e.to_ms : e.at_ms;
}

/** outstanding is the energy drawn by items still resident (drawn, not yet attributed). */
export function outstanding(a: PoolAccount): bigint {
  return a.drawn - a.claimed - a.evicted;
}

function provisioned(a: PoolAccount, e: ProvisionedEntry): void {
  if (a.items.has(e.item)) fail("DuplicateItem", `item ${e.item} is already in the pool`);
  if (e.manifest !== a.manifest)
    fail("BadPoolEntry", `item ${e.item}: manifest ${e.manifest}, want the pool's ${a.manifest}`);
  const uj = figureUj(e.provision);
  if (uj === 0n) fail("ZeroEnergy", `item ${e.item}: provisioning recorded as zero`);
  a.items.set(e.item, {
    item: e.item,
    state: "resident",
    provisioned_ms: e.at_ms,
    provision: uj,
    residency: 0n,
    accounted_to_ms: e.at_ms,
  });
  a.drawn += uj;
}

function resident(a: PoolAccount, item: string, attributing: boolean): ItemAccount {
  const it = a.items.get(item);
  if (!it) return fail("UnknownItem", `item ${item} was never provisioned`);
  if (it.state !== "resident")
    fail(
      attributing ? "DoubleClaim" : "Unattributed",
      `item ${item} is already ${it.state}; ${attributing ? "its energy is attributed once" : "energy drawn after attribution is never attributed"}`,
    );
  return it;
}

function accrued(a: PoolAccount, e: AccruedEntry): void {
  const it = resident(a, e.item, false);
  if (e.from_ms !== it.accounted_to_ms)
    fail("AccrualGap", `item ${e.item}: accrual from ${e.from_ms}, want ${it.accounted_to_ms}`);
  if (e.to_ms <= e.from_ms)
    fail("AccrualGap", `item ${e.item}: accrual interval [${e.from_ms}, ${e.to_ms}) is empty`);
  const uj = figureUj(e.residency);
  it.residency += uj;
  it.accounted_to_ms = e.to_ms;
  a.drawn += uj;
}

/** checkAttribution checks a claim's or eviction's stated split against the item's account (§15.4). */
function attribute(a: PoolAccount, e: ClaimedEntry | EvictedEntry, total: Amount): ItemAccount {
  const it = resident(a, e.item, true);
  if (parseAmount(total) === 0n) fail("ZeroEnergy", `item ${e.item}: ${e.kind} recorded as zero`);
  if (e.at_ms !== it.accounted_to_ms)
    fail(
      "AccrualGap",
      `item ${e.item}: residency accounted to ${it.accounted_to_ms}, ${e.kind} at ${e.at_ms}`,
    );
  const p = parseAmount(e.provision_uj);
  const r = parseAmount(e.residency_uj);
  if (p !== it.provision || r !== it.residency || parseAmount(total) !== p + r)
    fail(
      "AccruedMismatch",
      `item ${e.item}: ${e.kind} states ${total} (${p} + ${r}), want ${it.provision + it.residency} (${it.provision} + ${it.residency})`,
    );
  return it;
}

function claimed(a: PoolAccount, e: ClaimedEntry): void {
  const it = attribute(a, e, e.accrued_uj);
  it.state = "claimed";
  a.claimed += it.provision + it.residency;
}

function evicted(a: PoolAccount, e: EvictedEntry): void {
  const it = attribute(a, e, e.overhead_uj);
  it.state = "evicted";
  a.evicted += it.provision + it.residency;
}

function closed(a: PoolAccount, e: ClosedEntry): void {
  const left = [...a.items.values()].filter((i) => i.state === "resident");
  if (left.length > 0)
    fail("Unattributed", `${left.length} item(s) still resident at close, first ${left[0]?.item ?? ""}`);
  const [d, c, v] = [parseAmount(e.drawn_uj), parseAmount(e.claimed_uj), parseAmount(e.evicted_uj)];
  if (d !== a.drawn || c !== a.claimed || v !== a.evicted || d !== c + v)
    fail(
      "ConservationViolated",
      `close states drawn ${d} = claimed ${c} + evicted ${v}; ledger has ${a.drawn} = ${a.claimed} + ${a.evicted}`,
    );
  a.closed = true;
}

/** applyEntry checks one entry against the account and applies it (§15.3–§15.6); throws the spec code. */
export function applyEntry(a: PoolAccount, e: PoolEntry): void {
  if (a.closed) fail("PoolClosed", `entry ${e.seq} after the pool closed`);
  const t = entryTime(e);
  if (t < a.last_ms) fail("TimeReversed", `entry ${e.seq} at ${t} precedes ${a.last_ms}`);
  switch (e.kind) {
    case "provisioned":
      provisioned(a, e);
      break;
    case "accrued":
      accrued(a, e);
      break;
    case "claimed":
      claimed(a, e);
      break;
    case "evicted":
      evicted(a, e);
      break;
    case "closed":
      closed(a, e);
      break;
  }
  a.last_ms = t;
}

/** amount formats an accounting total for the wire. */
export function amount(n: bigint): Amount {
  return formatAmount(n);
}
