// Test helpers: a fake powercap tree laid out like /sys/class/powercap, and busy child processes.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The range the fake zones wrap at (a real package's is 262143328850 µJ). */
export const RANGE = 262_143_328_850n;

/** fakePowercap lays out intel-rapl zones (package, core, dram, psys) under a temp dir and returns its path. */
export function fakePowercap(opts: { dram?: boolean } = {}): string {
  const root = mkdtempSync(join(tmpdir(), "powercap-"));
  mkdirSync(join(root, "intel-rapl"));
  writeFileSync(join(root, "intel-rapl", "enabled"), "1\n");
  const zone = (id: string, name: string, uj: bigint): void => {
    mkdirSync(join(root, id));
    writeFileSync(join(root, id, "name"), `${name}\n`);
    setCounter(root, id, uj);
    writeFileSync(join(root, id, "max_energy_range_uj"), `${RANGE}\n`);
  };
  zone("intel-rapl:0", "package-0", 1_000_000n);
  zone("intel-rapl:0:0", "core", 500_000n);
  if (opts.dram ?? true) zone("intel-rapl:0:1", "dram", 2_000n);
  zone("intel-rapl:1", "psys", 9_000_000n);
  return root;
}

/** setCounter writes a zone's energy_uj as the kernel would show it. */
export function setCounter(root: string, id: string, uj: bigint): void {
  writeFileSync(join(root, id, "energy_uj"), `${uj}\n`);
}

/** busyChild starts a process that spins on the CPU for `ms` then exits. */
export function busyChild(ms: number): ChildProcess {
  const code = `const t = Date.now(); let x = 0; while (Date.now() - t < ${ms}) x++; process.exit(x > 0 ? 0 : 1);`;
  return spawn(process.execPath, ["-e", code], { stdio: "ignore" });
}

/** exitOf resolves when a child has exited and been reaped. */
export function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once("close", (code) => resolve(code)));
}

/** sleep waits `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** hasCode matches a thrown error's `code`. */
export const hasCode = (c: string) => (e: unknown) => (e as { code?: string }).code === c;
