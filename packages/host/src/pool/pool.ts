// §15 Warm pools on this host: a pool directory of real items (pre-created workspaces and stopped
// idle processes) and its signed ledger. Every operation replays and verifies the ledger first, and
// appends only entries the §15 accounting accepts, each fsynced before the operation returns. The
// ledger is a log of the host's append-only log primitive (poollog.ts): an operation's entries are
// compare-and-appended on the head it verified, and decided again when another writer took it.
import { existsSync, readdirSync, rmSync } from "node:fs";
import { type Digest, type Envelope, type KeyPair } from "@sbx/wire";
import type { EnergyComponent } from "@sbx/sandbox-attest/energy";
import type { ManifestEnvironment } from "@sbx/sandbox-attest/manifest";
import { writePoolEnvironment } from "./environment.ts";
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
import { errnoOf } from "../fsat/index.ts";
import { commitPoolOp, openPoolLog } from "./poollog.ts";
import { folderLedger, type PoolDecision, type PoolLedger } from "./ledger.ts";
import { ensureDir, poolPaths, writeFileDurably } from "./files.ts";
import { diskBytes, idleUsage, readIdle, removeTree, startIdle, stopIdle, writeIdle } from "./idle.ts";
import { provisionFigure, residencyFigure } from "./figures.ts";
import {
  destroyParked,
  killParkedNow,
  parkedAlive,
  parkedFrozen,
  parkedPaths,
  parkedUsage,
  parkSandbox,
  readParked,
  type ParkOptions,
} from "./parked.ts";
import { clearStarting, goneUnfinished, openItem, reapGone, reapUnfinished } from "./starting.ts";
import { faultPoint } from "../store/fault.ts";
import { detachWorkspace } from "../sandbox/disk.ts";

/**
 * reap ends the items a killed `sbx pool create` left unfinished (starting.ts), outside the ledger.
 * Whether an item is in the ledger is read afresh for each candidate once its creator is known to be
 * gone (reapUnfinished asks in that order): a creator that appended its item and then died is seen.
 */
const reap = (dir: string) => reapUnfinished(dir, (item) => openPoolDir(dir).account.items.has(item));

/** reapOn is reap for a ledger kept anywhere: read once, after every candidate's creator is known gone. */
async function reapOn(ledger: PoolLedger, dir: string): Promise<void> {
  const gone = goneUnfinished(dir);
  if (gone.length === 0) return;
  const s = await ledger.open();
  reapGone(dir, gone, (item) => s.account.items.has(item));
}

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
  /** The manifest's environment (address `manifest`), kept for claims to check against (environment.ts). */
  readonly environment?: ManifestEnvironment;
  readonly now?: () => number;
  /** Where the ledger is kept (ledger.ts); default the pool's log folder. */
  readonly ledger?: PoolLedger;
}

/** openPoolDir reads and verifies a pool directory's ledger (§15.7); `PoolMissing` when there is none. */
export function openPoolDir(dir: string, hosts?: readonly string[]): LedgerState {
  // Verifies only the log entries this process has not verified before (poollog.ts); the same state
  // and the same refusals as a replay from genesis.
  return openPoolLog(dir, hosts).state;
}

/** sign signs bodies into the ledger state, in order, and returns their envelopes. */
function sign(s: LedgerState, bodies: readonly (EntryBody | null)[], key: KeyPair): Envelope[] {
  return bodies.flatMap((b) => (b === null ? [] : [appendEntry(s, b, key)]));
}

/**
 * newItemFolder takes the first free item id from `from` on by making its folder (openItem: made
 * under a temporary name holding its starting record, then renamed; a rename onto an existing item
 * folder, never empty, fails), so two provisioners never share an item folder (no lock needed). An
 * id whose folder is left from a provisioner that died before its entry is skipped (and reaped).
 */
function newItemFolder(dir: string, from: number): string {
  const p = poolPaths(dir);
  ensureDir(p.items);
  for (let n = from; ; n++) {
    const item = `item-${String(n).padStart(4, "0")}`;
    try {
      openItem(p.item(item)); // renamed into place holding its starting record; never over an item
      return item;
    } catch (e) {
      const code = errnoOf(e);
      if (code !== "EEXIST" && code !== "ENOTEMPTY") throw e;
    }
  }
}

/**
 * createPoolDir creates a pool of `size` items in the empty or absent directory `dir` (§15.1,
 * §15.3): the signed descriptor, then each item's workspace and stopped idle process, each
 * recorded as `provisioned` with the CPU energy its provisioning took. `PoolExists` when `dir`
 * already holds a pool.
 */
export async function createPoolDir(dir: string, o: CreatePoolOptions): Promise<LedgerState> {
  const p = poolPaths(dir);
  const ledger = o.ledger ?? folderLedger(dir);
  if (existsSync(p.descriptor)) {
    await tryReap(ledger, dir);
    throw new HostError("PoolExists", `${dir} already holds a pool`);
  }
  ensureDir(p.items);
  ledger.bind();
  const now = o.now ?? Date.now;
  const s = createLedger({ name: o.name, manifest: o.manifest, created_ms: now() }, o.key);
  if (o.environment !== undefined) writePoolEnvironment(dir, o.manifest, o.environment);
  writeFileDurably(p.descriptor, JSON.stringify(s.pool) + "\n");
  await provisionItems(dir, s, o.size, o);
  return ledger.open();
}

/** tryReap reaps what it can of a pool whose ledger may not open (a refusal then is the caller's). */
async function tryReap(ledger: PoolLedger, dir: string): Promise<void> {
  try {
    await reapOn(ledger, dir);
  } catch {
    // the refusal that follows stands; list or destroy names what is wrong with the ledger
  }
}

/**
 * provisionItems adds `n` items to the pool (§15.3). `s` names the pool (its manifest); each item's
 * id and entry are decided on the ledger as read when it is appended, so other writers (claims,
 * evictions, another provisioner) may append meanwhile.
 */
export async function provisionItems(
  dir: string,
  s: LedgerState,
  n: number,
  o: Omit<CreatePoolOptions, "name" | "manifest" | "size">,
): Promise<string[]> {
  const p = poolPaths(dir);
  const ids: string[] = [];
  const ledger = o.ledger ?? folderLedger(dir);
  await reapOn(ledger, dir);
  for (let i = 0; i < n; i++) {
    const item = newItemFolder(dir, (await ledger.open()).account.items.size);
    const before = process.cpuUsage();
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
    const provision = provisionFigure(BigInt(used.user + used.system), idleCpu, idleSource);
    await ledger.commit((t) => {
      const at = Math.max((o.now ?? Date.now)(), t.account.last_ms);
      const body: EntryBody = {
        kind: "provisioned",
        item,
        manifest: s.descriptor.manifest,
        at_ms: at,
        provision,
      };
      return { envs: sign(t, [body], o.key), result: null };
    });
    faultPoint("pool:provisioned"); // crash tests: in the ledger, its starting record not yet cleared
    clearStarting(p.item(item));
    ids.push(item);
  }
  return ids;
}

/** residencyNow measures what `item` has drawn since its residency was last accounted, up to `to`. */
function residencyNow(dir: string, s: LedgerState, item: string, to: number): EntryBody | null {
  const p = poolPaths(dir);
  const it = s.account.items.get(item);
  if (!it || to <= it.accounted_to_ms) return null;
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
    return { kind: "accrued", item, from_ms: it.accounted_to_ms, to_ms: to, residency };
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
  return { kind: "accrued", item, from_ms: it.accounted_to_ms, to_ms: to, residency };
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
  /** How many times the claim lost the ledger's head to another writer and decided again. */
  readonly retries: number;
}

/**
 * claimPoolItem claims `item` (default: the oldest resident one) into the run of (unit, grants):
 * residency accounted up to now, the claim appended, the idle process ended (§15.4). Refuses
 * `PoolEmpty`, and every §15 code the accounting raises (e.g. `DoubleClaim`).
 */
export function claimPoolItem(dir: string, o: ClaimOptions): Claimed {
  const deadline = Date.now() + (o.busyMs ?? 10_000);
  return claimedOf(dir, commitPoolOp(dir, claimDecision(dir, o), deadline));
}

/** claimPoolItemOn is claimPoolItem on a ledger kept anywhere (ledger.ts). */
export async function claimPoolItemOn(ledger: PoolLedger, dir: string, o: ClaimOptions): Promise<Claimed> {
  const deadline = Date.now() + (o.busyMs ?? 10_000);
  return claimedOf(dir, await ledger.commit(claimDecision(dir, o), deadline));
}

/** What a claim names: the run of (unit, grants), the signing key, the item (default the oldest resident). */
export interface ClaimOptions {
  readonly unit: Digest;
  readonly grants: Digest;
  readonly key: KeyPair;
  readonly item?: string;
  readonly now?: () => number;
  /** How long (ms) lost races on the ledger's head are retried before StaleHead (default 10 s). */
  readonly busyMs?: number;
}

function claimDecision(dir: string, o: ClaimOptions): PoolDecision<string> {
  // Concurrent claimants race on the ledger's head: a claimant whose append lost the head
  // (StaleHead) reads the new entries and decides again, so it takes the next resident item, or is
  // told PoolEmpty (DoubleClaim for an --item another took). It gives up with StaleHead only after
  // busyMs (default 10 s) of lost races.
  return (t, stillHead) => {
    const it = pickResident(t, o.item);
    // The residency up to now and the claim go in one log entry: the claim is committed with the
    // residency it carries, or neither is.
    const body = residencyNow(dir, t, it, Math.max((o.now ?? Date.now)(), t.account.last_ms));
    // Under contention most heads are lost: decide again before signing on one already taken.
    if (stillHead !== undefined && !stillHead())
      throw new HostError("StaleHead", `${dir}: the ledger moved on while claiming`);
    const envs = sign(t, [body], o.key);
    envs.push(appendEntry(t, claimBody(t, it, o.unit, o.grants), o.key));
    return { envs, result: it };
  };
}

function claimedOf(
  dir: string,
  { result: item, state: s, retries }: { result: string; state: LedgerState; retries: number },
): Claimed {
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
    retries,
  };
}

/**
 * evictPoolItem evicts `item` as overhead (§15.5): its residency up to now and the eviction
 * appended as one log entry, then its process and folder removed.
 */
export function evictPoolItem(
  dir: string,
  item: string,
  reason: EvictionReason,
  key: KeyPair,
  now: () => number = Date.now,
): LedgerState {
  return evicted(dir, item, commitPoolOp(dir, evictDecision(dir, item, reason, key, now)).state);
}

/** evictPoolItemOn is evictPoolItem on a ledger kept anywhere (ledger.ts). */
export async function evictPoolItemOn(
  ledger: PoolLedger,
  dir: string,
  item: string,
  reason: EvictionReason,
  key: KeyPair,
  now: () => number = Date.now,
): Promise<LedgerState> {
  return evicted(dir, item, (await ledger.commit(evictDecision(dir, item, reason, key, now))).state);
}

function evictDecision(
  dir: string,
  item: string,
  reason: EvictionReason,
  key: KeyPair,
  now: () => number,
): PoolDecision<null> {
  return (t) => {
    pickResident(t, item);
    const body = residencyNow(dir, t, item, Math.max(now(), t.account.last_ms));
    const envs = sign(t, [body], key);
    envs.push(appendEntry(t, evictBody(t, item, reason), key));
    return { envs, result: null };
  };
}

function evicted(dir: string, item: string, state: LedgerState): LedgerState {
  const idle = readIdle(poolPaths(dir).proc(item));
  if (idle) stopIdle(idle.pid);
  killParkedNow(poolPaths(dir).item(item));
  removeTree(poolPaths(dir).item(item));
  return state;
}

/** closePoolDir evicts every resident item (`host-shutdown`) and closes the ledger (§15.6). */
export function closePoolDir(dir: string, key: KeyPair, now: () => number = Date.now): LedgerState {
  const s = openPoolDir(dir);
  for (const it of [...s.account.items.values()].filter((i) => i.state === "resident"))
    evictPoolItem(dir, it.item, "host-shutdown", key, now);
  // Built on the ledger as read: an item provisioned meanwhile makes the close Unattributed.
  return commitPoolOp(dir, closeDecision(key, now)).state;
}

/** closePoolOn is closePoolDir on a ledger kept anywhere (ledger.ts). */
export async function closePoolOn(
  ledger: PoolLedger,
  dir: string,
  key: KeyPair,
  now: () => number = Date.now,
): Promise<LedgerState> {
  const s = await ledger.open();
  for (const it of [...s.account.items.values()].filter((i) => i.state === "resident"))
    await evictPoolItemOn(ledger, dir, it.item, "host-shutdown", key, now);
  return (await ledger.commit(closeDecision(key, now))).state;
}

function closeDecision(key: KeyPair, now: () => number): PoolDecision<null> {
  return (t) => ({ envs: sign(t, [closeBody(t, Math.max(now(), t.account.last_ms))], key), result: null });
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
  reap(dir);
  return { state: s, items: itemViews(dir, s, now) };
}

/** listPoolOn is listPool on a ledger kept anywhere (ledger.ts). */
export async function listPoolOn(
  ledger: PoolLedger,
  dir: string,
  now: () => number = Date.now,
): Promise<{ state: LedgerState; items: ItemView[] }> {
  const s = await ledger.open();
  await reapOn(ledger, dir);
  return { state: s, items: itemViews(dir, s, now) };
}

function itemViews(dir: string, s: LedgerState, now: () => number): ItemView[] {
  const t = Math.max(now(), s.account.last_ms);
  const items = [...s.account.items.values()].map((it) => {
    const accounted = it.provision + it.residency;
    const body = it.state === "resident" ? residencyNow(dir, s, it.item, t) : null;
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
  return items;
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
  ledger: PoolLedger = folderLedger(dir),
): Promise<LedgerState> {
  const open = await ledger.open();
  const s = open.account.closed ? open : await closePoolOn(ledger, dir, key, now);
  await reapOn(ledger, dir);
  const items = poolPaths(dir).items;
  const names = existsSync(items) ? readdirSync(items) : [];
  for (const name of names) {
    await destroyParked(poolPaths(dir).item(name));
    // A claimant that died before its write-back leaves the item's workspace mounted (disk.ts).
    detachWorkspace(parkedPaths(poolPaths(dir).item(name)).workspace);
  }
  rmSync(items, { recursive: true, force: true });
  return s;
}
