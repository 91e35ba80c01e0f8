// §13 The run lock: on one host, at most one live process acts on a run (its supervisor, or a
// command acting while none is live). The lock file holds "<pid> <start ticks>" and appears whole
// (a temp file hard-linked to the lock's name); a holder that is no longer alive, or whose pid now
// names another process, is taken over. Across hosts, compare-and-append on the record's head is
// what keeps two resumers apart (§13.7); the lock only keeps one host's commands in order.
import { closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { HostError } from "../errors.ts";

/** The start time of `pid` (clock ticks since boot), or null when it is gone or a zombie. */
export function startTicks(pid: number): string | null {
  try {
    const s = readFileSync(`/proc/${String(pid)}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return f[0] === "Z" ? null : (f[19] ?? null);
  } catch {
    return null;
  }
}

/** lockHolder returns the live pid holding `lock`, or null when it is free or its holder is dead. */
export function lockHolder(lock: string): number | null {
  let text: string;
  try {
    text = readFileSync(lock, "latin1");
  } catch {
    return null;
  }
  const m = /^(\d{1,10}) (\d{1,20})\n$/.exec(text);
  if (!m) return null;
  const pid = Number(m[1]);
  return startTicks(pid) === m[2] ? pid : null;
}

/** A taken lock; release() removes it if it is still ours. */
export interface RunLock {
  release(): void;
}

/**
 * takeRunLock takes `lock` for this process. Refuses (`RunBusy`) when a live process holds it; a dead
 * holder's lock is moved aside and dropped.
 */
export function takeRunLock(lock: string): RunLock {
  const me = `${String(process.pid)} ${startTicks(process.pid) ?? "0"}\n`;
  const tmp = `${lock}.${String(process.pid)}.${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(tmp, "wx", 0o600);
  try {
    writeSync(fd, me);
  } finally {
    closeSync(fd);
  }
  try {
    for (let tries = 0; tries < 4; tries++) {
      try {
        linkSync(tmp, lock);
        return {
          release: () => {
            if (lockHolder(lock) === process.pid) unlinkSync(lock);
          },
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      const holder = lockHolder(lock);
      if (holder !== null)
        throw new HostError("RunBusy", `the run is held by live process ${String(holder)}`);
      const aside = `${lock}.stale.${randomBytes(6).toString("hex")}`;
      try {
        renameSync(lock, aside);
        unlinkSync(aside);
      } catch {
        // another taker moved it first
      }
    }
    throw new HostError("RunBusy", `could not take ${lock}`);
  } finally {
    unlinkSync(tmp);
  }
}
