// Fault injection for the crash tests: with SBX_STORE_CRASH_AT=k the k-th write step of this
// process (counted from 1) kills it with SIGKILL, so a test can stop a writer at every step.
// SBX_STORE_CRASH_TRACE=1 prints each step's label to stderr (to count the steps of an operation).
// SBX_STORE_CRASH_ON=LABEL kills it at the first step with that exact label (a named point, e.g.
// durable:segment-appended, whatever its number); LABEL#n at the n-th step with that label (e.g.
// durable:interval-opened#2, the interval a supervisor opens when it thaws a frozen run).
import { writeSync } from "node:fs";

const target = Number(process.env.SBX_STORE_CRASH_AT ?? "0");
const trace = process.env.SBX_STORE_CRASH_TRACE === "1";
const named = process.env.SBX_STORE_CRASH_ON ?? "";
const nth = /^(.*)#([1-9][0-9]*)$/.exec(named);
const namedLabel = nth?.[1] ?? named;
const namedAt = Number(nth?.[2] ?? "1");
let count = 0;
let namedCount = 0;

/** faultsEnabled is true when a crash step or a trace was asked for. */
export const faultsEnabled = target > 0 || trace || named !== "";

/** faultPoint counts one write step and dies at the chosen one. A no-op in normal runs. */
export function faultPoint(label: string): void {
  if (!faultsEnabled) return;
  count++;
  if (trace) process.stderr.write(`step ${count} ${label}\n`);
  if (label === namedLabel) namedCount++;
  if (count === target || (label === namedLabel && namedCount === namedAt))
    process.kill(process.pid, "SIGKILL");
}

/** writeFully writes all of `buf` at `pos`; under fault injection in two halves with a step between, so a torn write can be produced. */
export function writeFully(fd: number, buf: Uint8Array, pos: number | null, label: string): void {
  const parts =
    faultsEnabled && buf.length > 1
      ? [buf.subarray(0, buf.length >> 1), buf.subarray(buf.length >> 1)]
      : [buf];
  let at = pos;
  for (const part of parts) {
    faultPoint(`${label}:write`);
    let off = 0;
    while (off < part.length) {
      const n = writeSync(fd, part, off, part.length - off, at === null ? null : at + off);
      off += n;
    }
    if (at !== null) at += part.length;
  }
}
