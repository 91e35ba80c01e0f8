// §15 Warm pools on this host: a pool directory of real items (pre-created workspaces and stopped
// idle processes) and its signed ledger. Every operation replays and verifies the ledger first, and
// appends only entries the §15 accounting accepts, each fsynced before the operation returns.
import { existsSync } from "node:fs";
import { type Digest, type KeyPair } from "@sbx/wire";
import type { EnergyComponent } from "@sbx/sandbox-attest/energy";
import {
  appendEntry,
  claimBody,
  claimComponents,
  closeBody,
  createPool as createLedger,
  evictBody,
  itemAttribution,
  type ClaimedEntry,
  type EntryBody,
  type EvictionReason,
  type LedgerState,
} from "@sbx/sandbox-attest/warmpool";
import { HostError } from "../errors.ts";
import { openHeldPool } from "./held.ts";
import { appendLines, ensureDir, poolPaths, withLock, writeFileDurably } from "./files.ts";
import { diskBytes, idleUsage, readIdle, removeTree, startIdle, stopIdle, writeIdle } from "./idle.ts";
import { provisionFigure, residencyFigure } from "./figures.ts";
import {
  destroyParked,
  killParkedNow,
  parkedAlive,
  parkedFrozen,
  parkedUsage,
  parkSandbox,
  readParked,
  writeParked,
  type ParkOptions,
} from "./parked.ts";
import { readdirSync, rmSync } from "node:fs";
import { clearStarting, openItem, reapUnfinished } from "./starting.ts";
import { faultPoint } from "../store/fault.ts";

/** reap ends the items a killed `sbx pool create` left unfinished (starting.ts), outside the ledger. */
const reap = (dir: string, s: LedgerState) => reapUnfinished(dir, (item) => s.account.items.has(item));

/** Where a parked sandbox's figures come from (§15.3): its cgroup's counters, read by the host. */
const PARKED_SOURCES = {
  memory: "cgroup memory.current|memory.usage_in_bytes (frozen sandbox)",
  cpu: "cgroup cpu.stat|cpuacct.usage",
};

/** Options of createPoolDir. */
export interface CreatePoolOptions {
  readonly name: string;
  readonly manifest: Digest;
  readonly size: number;
  readonly key: KeyPair;
  /** Keep a stopped idle process per item (default true; ignored with `parked`). */
  readonly idleProcess?: boolean;
  /**
   * Each item is a real S1 sandbox, parked frozen at its hand-off (pool/parked.ts), built with these
   * options (the manifest's user, env, workspace folder, limits). Without it, items are the older
   * workspace plus stopped idle process.
   */
  readonly parked?: ParkOptions;
  readonly now?: () => number;
}

/** openPoolDir reads and verifies a pool directory's ledger (§15.7); `PoolMissing` when there is none. */
export function openPoolDir(dir: string, hosts?: readonly string[]): LedgerState {
  // Verifies only the entries this process has not verified before (held.ts); the same state and
  // the same refusals as a replay from genesis.
  return openHeldPool(dir, hosts);
}

/** append signs bodies into the ledger state and writes them durably, in order. */
function append(dir: string, s: LedgerState, bodies: readonly EntryBody[], key: KeyPair): void {
  const envs = bodies.map((b) => appendEntry(s, b, key));
  appendLines(poolPaths(dir).ledger, envs);
}

/**
 * createPoolDir creates a pool of `size` items in the empty or absent directory `dir` (§15.1,
 * §15.3): the signed descriptor, then each item's workspace and stopped idle process, each
 * recorded as `provisioned` with the CPU energy its provisioning took. `PoolExists` when `dir`
 * already holds a pool.
 */
export async function createPoolDir(dir: string, o: CreatePoolOptions): Promise<LedgerState> {
  const p = poolPaths(dir);
  if (existsSync(p.descriptor)) {
    tryReap(dir);
    throw new HostError("PoolExists", `${dir} already holds a pool`);
  }
  ensureDir(p.items);
  const now = o.now ?? Date.now;
  const s = createLedger({ name: o.name, manifest: o.manifest, created_ms: now() }, o.key);
  writeFileDurably(p.descriptor, JSON.stringify(s.pool) + "\n");
  await provisionItems(dir, s, o.size, o);
  return s;
}

/** tryReap reaps what it can of a pool whose ledger may not open (a refusal then is the caller's). */
function tryReap(dir: string): void {
  try {
    reap(dir, openPoolDir(dir));
  } catch {
    // the refusal that follows stands; list or destroy names what is wrong with the ledger
  }
}

/** provisionItems adds `n` items to an open pool (§15.3). */
export async function provisionItems(
  dir: string,
  s: LedgerState,
  n: number,
  o: Omit<CreatePoolOptions, "name" | "manifest" | "size">,
): Promise<string[]> {
  const p = poolPaths(dir);
  const ids: string[] = [];
  reap(dir, s);
  for (let i = 0; i < n; i++) {
    const item = `item-${String(s.account.items.size).padStart(4, "0")}`;
    const before = process.cpuUsage();
    openItem(p.item(item)); // its folder appears holding its starting record (starting.ts)
    writeFileDurably(
      `${p.item(item)}/item.json`,
      JSON.stringify({ pool: s.pool_id, item, manifest: s.descriptor.manifest }) + "\n",
    );
    let idleCpu = 0n;
    let idleSource: string | undefined;
    if (o.parked !== undefined) {
      idleCpu = BigInt((await parkSandbox(dir, p.item(item), o.parked)).cpu_us);
      idleSource = PARKED_SOURCES.cpu;
    } else if (o.idleProcess !== false) {
      const pid = await startIdle(p.workspace(item));
      idleCpu = idleUsage(pid)?.cpu_us ?? 0n;
      writeIdle(p.proc(item), { pid, started_ms: Date.now(), cpu_us: idleCpu.toString() });
    }
    const used = process.cpuUsage(before);
    const at = Math.max((o.now ?? Date.now)(), s.account.last_ms);
    const provision = provisionFigure(BigInt(used.user + used.system), idleCpu, idleSource);
    withLock(p.lock, () =>
      append(
        dir,
        s,
        [{ kind: "provisioned", item, manifest: s.descriptor.manifest, at_ms: at, provision }],
        o.key,
      ),
    );
    faultPoint("pool:provisioned"); // crash tests: in the ledger, its starting record not yet cleared
    clearStarting(p.item(item));
    ids.push(item);
  }
  return ids;
}

/** residencyNow measures what `item` has drawn since its residency was last accounted, up to `to`. */
function residencyNow(
  dir: string,
  s: LedgerState,
  item: string,
  to: number,
): { body: EntryBody | null; cpu: bigint | null } {
  const p = poolPaths(dir);
  const it = s.account.items.get(item);
  if (!it || to <= it.accounted_to_ms) return { body: null, cpu: null };
  const parked = readParked(p.item(item));
  if (parked !== null) {
    const use = parkedUsage(parked);
    const cpu = use ? use.cpu_us - BigInt(parked.cpu_us) : 0n;
    const residency = residencyFigure({
      ms: to - it.accounted_to_ms,
      rss: use?.rss ?? 0n,
      storage: diskBytes(p.item(item)),
      cpu_us: cpu > 0n ? cpu : 0n,
      sources: PARKED_SOURCES,
    });
    return {
      body: { kind: "accrued", item, from_ms: it.accounted_to_ms, to_ms: to, residency },
      cpu: use?.cpu_us ?? null,
    };
  }
  const idle = readIdle(p.proc(item));
  const usage = idle ? idleUsage(idle.pid) : null;
  const cpu = usage && idle ? usage.cpu_us - BigInt(idle.cpu_us) : 0n;
  const residency = residencyFigure({
    ms: to - it.accounted_to_ms,
    rss: usage?.rss ?? 0n,
    storage: diskBytes(p.item(item)),
    cpu_us: cpu > 0n ? cpu : 0n,
  });
  return {
    body: { kind: "accrued", item, from_ms: it.accounted_to_ms, to_ms: to, residency },
    cpu: usage?.cpu_us ?? null,
  };
}

/** accrueTo appends an item's residency up to `to` and records the idle CPU accounted. */
function accrueTo(dir: string, s: LedgerState, item: string, to: number, key: KeyPair): void {
  const { body, cpu } = residencyNow(dir, s, item, to);
  if (!body) return;
  append(dir, s, [body], key);
  const parked = readParked(poolPaths(dir).item(item));
  if (parked !== null && cpu !== null)
    writeParked(poolPaths(dir).item(item), { ...parked, cpu_us: cpu.toString() });
  const idle = readIdle(poolPaths(dir).proc(item));
  if (idle && cpu !== null) writeIdle(poolPaths(dir).proc(item), { ...idle, cpu_us: cpu.toString() });
}

function pickResident(s: LedgerState, item?: string): string {
  if (item !== undefined) return itemAttribution(s, item).item; // UnknownItem, DoubleClaim
  const first = [...s.account.items.values()].find((i) => i.state === "resident");
  if (!first) throw new HostError("PoolEmpty", "no resident item to claim");
  return first.item;
}

/** What a claim hands the claiming run (§15.4). */
export interface Claimed {
  readonly claim: ClaimedEntry;
  /** The `warmpool` components for the run's first energy receipt. */
  readonly components: EnergyComponent[];
  /** The claimed item's pre-created workspace, now the run's. */
  readonly workspace: string;
  readonly state: LedgerState;
  /** The item's folder; with `parked`, its frozen sandbox is the run's (claimSandbox). */
  readonly itemDir: string;
  /** The item is a parked sandbox (kept frozen for the claimant), not an idle process. */
  readonly parked: boolean;
}

/**
 * claimPoolItem claims `item` (default: the oldest resident one) into the run of (unit, grants):
 * residency accounted up to now, the claim appended, the idle process ended (§15.4). Refuses
 * `PoolEmpty`, and every §15 code the accounting raises (e.g. `DoubleClaim`).
 */
export function claimPoolItem(
  dir: string,
  o: { unit: Digest; grants: Digest; key: KeyPair; item?: string; now?: () => number; busyMs?: number },
): Claimed {
  // Concurrent claimants take turns: a claim that finds the lock held waits (up to busyMs, default
  // 10 s) and then decides from the ledger as it is by then, so a loser takes the next item, or is
  // told PoolEmpty, instead of a bare PoolBusy.
  const deadline = Date.now() + (o.busyMs ?? 10_000);
  for (;;)
    try {
      return claimOnce(dir, o);
    } catch (e) {
      if (!(e instanceof HostError && e.code === "PoolBusy") || Date.now() > deadline) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2 + Math.floor(Math.random() * 8));
    }
}

function claimOnce(
  dir: string,
  o: { unit: Digest; grants: Digest; key: KeyPair; item?: string; now?: () => number },
): Claimed {
  return withLock(poolPaths(dir).lock, () => {
    const s = openPoolDir(dir);
    const item = pickResident(s, o.item);
    // The residency up to now and the claim go in one write and one fsync: the claim is committed
    // with the residency it carries, or neither is.
    const { body } = residencyNow(dir, s, item, Math.max((o.now ?? Date.now)(), s.account.last_ms));
    const envs = body ? [appendEntry(s, body, o.key)] : [];
    envs.push(appendEntry(s, claimBody(s, item, o.unit, o.grants), o.key));
    appendLines(poolPaths(dir).ledger, envs);
    const claim = s.payloads[s.payloads.length - 1] as ClaimedEntry;
    const idle = readIdle(poolPaths(dir).proc(item));
    if (idle) stopIdle(idle.pid);
    return {
      claim,
      components: claimComponents(s, claim),
      workspace: poolPaths(dir).workspace(item),
      state: s,
      itemDir: poolPaths(dir).item(item),
      parked: readParked(poolPaths(dir).item(item)) !== null,
    };
  });
}

/** evictPoolItem evicts `item` as overhead (§15.5): residency accounted, eviction appended, its process and folder removed. */
export function evictPoolItem(
  dir: string,
  item: string,
  reason: EvictionReason,
  key: KeyPair,
  now: () => number = Date.now,
): LedgerState {
  return withLock(poolPaths(dir).lock, () => {
    const s = openPoolDir(dir);
    pickResident(s, item);
    accrueTo(dir, s, item, Math.max(now(), s.account.last_ms), key);
    append(dir, s, [evictBody(s, item, reason)], key);
    const idle = readIdle(poolPaths(dir).proc(item));
    if (idle) stopIdle(idle.pid);
    killParkedNow(poolPaths(dir).item(item));
    removeTree(poolPaths(dir).item(item));
    return s;
  });
}

/** closePoolDir evicts every resident item (`host-shutdown`) and closes the ledger (§15.6). */
export function closePoolDir(dir: string, key: KeyPair, now: () => number = Date.now): LedgerState {
  const s = openPoolDir(dir);
  for (const it of [...s.account.items.values()].filter((i) => i.state === "resident"))
    evictPoolItem(dir, it.item, "host-shutdown", key, now);
  return withLock(poolPaths(dir).lock, () => {
    const t = openPoolDir(dir);
    append(dir, t, [closeBody(t, Math.max(now(), t.account.last_ms))], key);
    return t;
  });
}

/** One item as `sbx pool list` shows it: its state and energy, with live residency for resident items. */
export interface ItemView {
  readonly item: string;
  readonly state: "resident" | "claimed" | "evicted";
  readonly provisioned_ms: number;
  readonly accounted_uj: string;
  /** For resident items: accounted energy plus the residency measured since, up to now. */
  readonly accrued_now_uj: string;
  readonly idle_pid: number | null;
  /** For a parked sandbox: whether the kernel reports it frozen now (null: no parked sandbox). */
  readonly frozen: boolean | null;
}

/** listPool reports every item with its accrued energy so far (§15.3), measuring live residency. */
export function listPool(
  dir: string,
  now: () => number = Date.now,
): { state: LedgerState; items: ItemView[] } {
  const s = openPoolDir(dir);
  reap(dir, s);
  const t = Math.max(now(), s.account.last_ms);
  const items = [...s.account.items.values()].map((it) => {
    const accounted = it.provision + it.residency;
    const { body } = it.state === "resident" ? residencyNow(dir, s, it.item, t) : { body: null };
    const live = body?.kind === "accrued" ? body.residency.reduce((a, c) => a + BigInt(c.uj), 0n) : 0n;
    const idle = it.state === "resident" ? readIdle(poolPaths(dir).proc(it.item)) : null;
    const parked = it.state === "resident" ? readParked(poolPaths(dir).item(it.item)) : null;
    return {
      item: it.item,
      state: it.state,
      provisioned_ms: it.provisioned_ms,
      accounted_uj: accounted.toString(),
      accrued_now_uj: (accounted + live).toString(),
      idle_pid: idle?.pid ?? null,
      frozen: parked === null ? null : parkedAlive(parked) && parkedFrozen(parked),
    };
  });
  return { state: s, items };
}

/**
 * destroyPoolDir (§15.6) ends a pool: every resident item evicted and the ledger closed (unless it
 * is closed already), then every sandbox still there (a claimed item's, whether its run ended or
 * its claimant was killed) destroyed and the items' folders removed. The descriptor and the ledger
 * stay, so the pool's accounting can still be verified.
 */
export async function destroyPoolDir(
  dir: string,
  key: KeyPair,
  now: () => number = Date.now,
): Promise<LedgerState> {
  const open = openPoolDir(dir);
  const s = open.account.closed ? open : closePoolDir(dir, key, now);
  reap(dir, s);
  const items = poolPaths(dir).items;
  const names = existsSync(items) ? readdirSync(items) : [];
  for (const name of names) await destroyParked(poolPaths(dir).item(name));
  rmSync(items, { recursive: true, force: true });
  return s;
}
