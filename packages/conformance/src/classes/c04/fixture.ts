// C4 fixture: one fixed journal with every event kind, and the systematic alteration of a member.
import { digestBytes, utf8, type Json, type JsonObject } from "@sbx/wire";
import { Journal, type EventInput } from "@sbx/sandbox-attest/journal";

/** J views a value as Json (vectors carry plain JSON). */
export const J = (x: unknown): Json => x as Json;

const bin = digestBytes(utf8("c4 /usr/bin/python3"));
const script = digestBytes(utf8("c4 /work/run.py"));
const line = digestBytes(utf8("hello\n"));
const policy = digestBytes(utf8("c4 exec policy"));

/** The fixed journal: one of each event kind, several chunks per stream, 11 events (not a power of two). */
export function inputs(): EventInput[] {
  return [
    {
      type: "exec.decision",
      policy,
      digest: script,
      path: "/work/run.py",
      route: "direct",
      rule: "allowed",
      allowed: true,
      source: "hash",
      pid: 4242,
    },
    {
      type: "exec.decision",
      policy,
      digest: bin,
      path: "/usr/bin/python3",
      route: "interpreter",
      rule: "allowed",
      allowed: true,
      source: "hash",
      pid: 4242,
    },
    { type: "process.start", pid: 4242, argv: ["/work/run.py", "--greet", "wörld"], binary: script },
    { type: "stdio.chunk", stream: "stdin", digest: digestBytes(new Uint8Array(0)), length: "0" },
    { type: "stdio.chunk", stream: "stdout", digest: line, length: "6" },
    {
      type: "exec.decision",
      policy,
      digest: bin,
      path: "/tmp/ld.so",
      route: "loader",
      rule: "denied",
      allowed: false,
      source: "cache",
      pid: 4242,
    },
    { type: "stdio.chunk", stream: "stderr", digest: digestBytes(utf8("denied\n")), length: "7" },
    { type: "file.write", path: "out/result.txt", digest: line, size: "6" },
    { type: "stdio.chunk", stream: "stdout", digest: line, length: "6" },
    { type: "process.exit", pid: 4243, code: null, signal: "SIGKILL" },
    { type: "process.exit", pid: 4242, code: 0, signal: null },
  ];
}
export function journal(n = 11): Journal {
  const j = new Journal();
  for (const x of inputs().slice(0, n)) j.append(x);
  return j;
}
export const eventsOf = (j: Journal): JsonObject[] =>
  j.events.map((e) => ({ ...(e as unknown as JsonObject) }));

/** alter returns another valid value for one member, or undefined where none is meaningful. */
export function alter(k: string, v: Json | undefined): Json | undefined {
  const rot: Record<string, string> = {
    direct: "interpreter",
    interpreter: "loader",
    loader: "direct",
    allowed: "denied",
    denied: "allowed",
    hash: "cache",
    cache: "hash",
    stdin: "stdout",
    stdout: "stderr",
    stderr: "stdin",
  };
  if (k === "type" || v === null || v === undefined) return undefined;
  if (typeof v === "boolean") return !v;
  if (typeof v === "number") return k === "code" ? (v + 1) % 256 : v + 1;
  if (Array.isArray(v)) return [...v, "x"];
  if (typeof v !== "string") return undefined;
  if (v.startsWith("blake3:")) return digestBytes(utf8(v));
  if (/^\d+$/.test(v)) return String(BigInt(v) + 1n);
  if (k === "signal") return "SIGTERM";
  return rot[v] ?? v + "x";
}
