// §15.3 A parked sandbox is written down before it exists. `sbx pool create` can be SIGKILLed at any
// step of parking an item; what it had made by then (the per-item /etc and seccomp folder, the
// workspace mountpoint, the run cgroup, the keeper and the sandbox under it) must never be left
// with nothing that names it. So, as the run lock does, the item's `starting.json` names each of
// these before it is made:
//   0. the creator (pid and start ticks): the item's folder appears already holding the record
//      (made under a temporary name and renamed, openItem), so no folder of an item is ever
//      without one;
//   1. the two host folders' chosen names;
//   2. the cgroup, once made and before any process is started;
//   3. the keeper (pid and start ticks), which then waits for a line on its stdin before it starts
//      the launcher: if the creator dies before that line, the keeper reads end of file and exits,
//      so no sandbox starts that is not recorded.
// The record stays until the item is in the ledger (pool.ts clears it after `provisioned`). An item
// folder that is not in the ledger, whose record names a creator that is gone, is unfinished:
// reapUnfinished kills and removes everything its record names, and the folder (and a temporary
// folder of openItem's whose creator is gone). A creator that is still alive is left alone (it may
// be parking that item now).
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import {
  cgroupProcs,
  hostHierarchies,
  removeCgroupDir,
  sweepStale,
  type RunCgroup,
} from "../sandbox/cgroup.ts";
import { freezeTarget } from "../durable/freezer.ts";
import { startTicks } from "../durable/lock.ts";
import { faultPoint } from "../store/fault.ts";
import { removeTree } from "./idle.ts";

/** A process named so that a reused pid is not mistaken for it: pid and its start ticks. */
export interface ProcessId {
  readonly pid: number;
  readonly start: string;
}

/** What an item's starting.json names: everything a parked sandbox holds on the host. */
export interface StartingRecord {
  /** The process parking the item. */
  readonly creator: ProcessId;
  /** The folder of the sandbox's generated /etc, seccomp program and hand-off FIFOs (null: not yet named). */
  readonly system: string | null;
  /** The empty folder the workspace is bound onto for bwrap, or null when none is needed. */
  readonly mountpoint: string | null;
  readonly cgroup: RunCgroup | null;
  readonly keeper: ProcessId | null;
}

/** The host's own parts of a sandbox that killSandboxNow ends and removes. */
export type HostParts = Pick<StartingRecord, "system" | "mountpoint" | "cgroup" | "keeper">;

const SYSTEM_NAME = /\/sbx-pool-system-[^/]+$/;
const MOUNT_NAME = /\/sbx-pool-mnt-[^/]+$/;

/** startingPath: the record of an item whose sandbox is not yet in the ledger. */
export function startingPath(itemDir: string): string {
  return join(itemDir, "starting.json");
}

/** freshHostDir names a folder under the host's temporary folder that does not exist yet (not made). */
export function freshHostDir(kind: "system" | "mnt"): string {
  return join(tmpdir(), `sbx-pool-${kind}-${randomBytes(8).toString("hex")}`);
}

/**
 * writeStarting replaces the item's record in one rename, so a SIGKILL leaves the old record or the
 * new one, never a torn one. No fsync: the record has to outlive the process, not the machine (after
 * a power loss no process or cgroup it names exists).
 */
export function writeStarting(itemDir: string, rec: StartingRecord): StartingRecord {
  const tmp = `${startingPath(itemDir)}.${String(process.pid)}.tmp`;
  writeFileSync(tmp, JSON.stringify(rec) + "\n", { mode: 0o600 });
  faultPoint("pool-starting:rename");
  renameSync(tmp, startingPath(itemDir));
  return rec;
}

/** thisProcess names the running process (pid and start ticks). */
function thisProcess(): ProcessId {
  const start = startTicks(process.pid);
  if (start === null) throw new RangeError("cannot read this process's start ticks");
  return { pid: process.pid, start };
}

/** A temporary item folder of openItem's: `.<item>.<pid>-<start ticks>.tmp`. */
const OPENING = /^\.[A-Za-z0-9_-]+\.(\d+)-(\d+)\.tmp$/;

/**
 * openItem (§15.3) makes the folder of a new item (and its workspace folder) holding its starting
 * record, which names this process as its creator: made under a temporary name and renamed, so the
 * folder never exists without its record. Refuses (the rename's error) when the folder exists.
 */
export function openItem(itemDir: string): void {
  const me = thisProcess();
  const tmp = join(dirname(itemDir), `.${basename(itemDir)}.${String(me.pid)}-${me.start}.tmp`);
  mkdirSync(dirname(itemDir), { recursive: true });
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(join(tmp, "workspace"), { recursive: true });
  writeStarting(tmp, { creator: me, system: null, mountpoint: null, cgroup: null, keeper: null });
  faultPoint("pool-item:opened");
  renameSync(tmp, itemDir);
}

/** beginStarting writes step 1 of the record: this process as the creator, the two folders' names. */
export function beginStarting(itemDir: string, system: string, mountpoint: string | null): StartingRecord {
  return writeStarting(itemDir, { creator: thisProcess(), system, mountpoint, cgroup: null, keeper: null });
}

/** readStarting reads an item's record, or null when it has none (or none that parses). */
export function readStarting(itemDir: string): StartingRecord | null {
  try {
    return JSON.parse(readFileSync(startingPath(itemDir), "utf8")) as StartingRecord;
  } catch {
    return null;
  }
}

/** clearStarting removes the item's record (the item is in the ledger, or nothing of it is left). */
export function clearStarting(itemDir: string): void {
  rmSync(startingPath(itemDir), { force: true });
}

/** sameProcess: `p` is still the process it names (same pid, same start ticks). */
export function sameProcess(p: ProcessId): boolean {
  return startTicks(p.pid) === p.start;
}

function killQuiet(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone
  }
}

function writeQuiet(path: string, value: string): void {
  try {
    writeFileSync(path, value);
  } catch {
    // gone
  }
}

/** removeHostFiles removes a sandbox's host folders, only when they carry the pool's own names. */
export function removeHostFiles(h: Pick<HostParts, "system" | "mountpoint">): void {
  if (h.mountpoint !== null && MOUNT_NAME.test(h.mountpoint))
    rmSync(h.mountpoint, { recursive: true, force: true });
  if (h.system !== null && SYSTEM_NAME.test(h.system)) rmSync(h.system, { recursive: true, force: true });
}

/**
 * killSandboxNow ends a sandbox without waiting (synchronous, for an eviction and the reaper): the
 * cgroup thawed, the keeper (if it is still the recorded process) and every process in the cgroup
 * sent SIGKILL, the emptied cgroups removed when they can be (else by a later sweep), and the host's
 * folders removed.
 */
export function killSandboxNow(h: HostParts): void {
  const cg = h.cgroup;
  if (cg !== null) {
    const t = freezeTarget(cg.v2, cg.dirs);
    writeQuiet(
      join(t.dir, t.kind === "v2" ? "cgroup.freeze" : "freezer.state"),
      t.kind === "v2" ? "0" : "THAWED",
    );
  }
  if (h.keeper !== null && sameProcess(h.keeper)) killQuiet(h.keeper.pid);
  if (cg !== null) {
    if (cg.v2 !== null) writeQuiet(join(cg.v2, "cgroup.kill"), "1");
    for (let i = 0; i < 200; i++) {
      const left = cg.dirs.flatMap(cgroupProcs);
      if (left.length === 0) break;
      for (const pid of left) killQuiet(pid);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
    // still emptying, or gone: sweepStale removes an empty one later (its hold is gone first)
    for (const d of [...cg.dirs].reverse()) removeCgroupDir(d);
  }
  removeHostFiles(h);
}

/**
 * reapUnfinished (§15.3) ends every unfinished item of the pool at `poolDir`: a folder under
 * `items/` whose starting.json names a creator that is gone, and that `inLedger` (asked after the
 * creator is found gone) does not know. Its
 * sandbox, cgroup, keeper and host folders are killed and removed, then the folder itself; run
 * cgroups left empty by a dead creator are swept. Returns the items reaped.
 */
export function reapUnfinished(poolDir: string, inLedger: (item: string) => boolean): string[] {
  return reapGone(poolDir, goneUnfinished(poolDir), inLedger);
}

/** An item folder with a starting record whose creator is gone (goneUnfinished). */
export interface GoneItem {
  readonly name: string;
  readonly rec: StartingRecord;
}

/**
 * goneUnfinished removes the temporary folders of openItem whose creator is gone, and lists the item
 * folders still holding a starting record whose creator is gone: nothing more is appended for them,
 * so a ledger read after this call answers for them for good (reapGone).
 */
export function goneUnfinished(poolDir: string): GoneItem[] {
  const items = join(poolDir, "items");
  let names: string[];
  try {
    names = readdirSync(items);
  } catch {
    return [];
  }
  const gone: GoneItem[] = [];
  for (const name of names) {
    const opening = OPENING.exec(name);
    if (opening !== null) {
      if (!sameProcess({ pid: Number(opening[1]), start: opening[2] ?? "" })) removeTree(join(items, name));
      continue;
    }
    const rec = readStarting(join(items, name));
    if (rec === null || sameProcess(rec.creator)) continue;
    gone.push({ name, rec });
  }
  return gone;
}

/** reapGone ends and removes each of `gone` that is not in the ledger (asked only now, per item). */
export function reapGone(
  poolDir: string,
  gone: readonly GoneItem[],
  inLedger: (item: string) => boolean,
): string[] {
  const items = join(poolDir, "items");
  const reaped: string[] = [];
  for (const { name, rec } of gone) {
    // Asked only now: its creator is gone, so nothing more is appended for it and the answer stands.
    if (inLedger(name)) continue;
    killSandboxNow(rec);
    removeTree(join(items, name));
    reaped.push(name);
  }
  if (reaped.length > 0) sweepStale(hostHierarchies());
  return reaped;
}
