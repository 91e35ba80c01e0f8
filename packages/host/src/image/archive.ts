// §14.9 Reading a tar stream (an image archive, or a layer, plain or gzip) entry by entry with npm
// `tar`'s parser, fed synchronously from a file: each entry's bytes reach the caller before the next
// header is read, and the first error (the parser's, strict, or the caller's) stops the walk.
import { closeSync, openSync, readSync } from "node:fs";
import { Parser, type ReadEntry } from "tar";
import { HostError } from "../errors.ts";

const CHUNK = 1 << 20;

/** One entry as the walk hands it over: its header fields. */
export interface TarEntry {
  readonly path: string;
  readonly type: string;
  readonly mode: number;
  readonly size: number;
  readonly linkpath: string;
}

/** Where an entry's data goes: each chunk in order, then end (called synchronously, before the next entry). */
export interface EntrySink {
  data(chunk: Buffer): void;
  end(): void;
}

function entryOf(e: ReadEntry): TarEntry {
  return { path: e.path, type: e.type, mode: e.mode ?? 0, size: e.size, linkpath: e.linkpath ?? "" };
}

function attach(e: ReadEntry, sink: EntrySink, fail: (err: unknown) => void): void {
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    try {
      sink.end();
    } catch (err) {
      fail(err);
    }
  };
  e.on("data", (c: Buffer) => {
    try {
      sink.data(c);
    } catch (err) {
      fail(err);
    }
  });
  e.on("end", end);
  // An entry without data has ended before it is handed over.
  if (e.size === 0) end();
}

/**
 * walkTar reads the tar (or gzip tar) file at `path` and calls `onEntry` for each entry, in order;
 * the sink it returns (if any) receives the entry's data.
 * A malformed archive is `ImageInvalid` (`what` names it); an error thrown by `onEntry` or by a data
 * handler stops the walk and is rethrown as it is.
 */
export function walkTar(path: string, what: string, onEntry: (e: TarEntry) => EntrySink | null): void {
  // Set from the parser's callbacks: the first failure of the caller's, the first of the parser's.
  const st: { failure: { err: unknown } | null; parseError: unknown; ended: boolean } = {
    failure: null,
    parseError: null,
    ended: false,
  };
  const fail = (err: unknown) => {
    st.failure ??= { err };
  };
  const p = new Parser({
    strict: true,
    onReadEntry: (e) => {
      if (st.failure === null)
        try {
          const sink = onEntry(entryOf(e));
          if (sink !== null) attach(e, sink, fail);
        } catch (err) {
          fail(err);
        }
      e.resume();
    },
  });
  p.on("error", (err: unknown) => (st.parseError ??= err));
  p.on("warn", (_code: string, msg: unknown) => (st.parseError ??= msg));
  p.on("end", () => (st.ended = true));
  const fd = openSync(path, "r");
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(CHUNK);
      const n = readSync(fd, buf, 0, CHUNK, null);
      if (n === 0 || st.failure !== null || st.parseError !== null) break;
      p.write(buf.subarray(0, n));
    }
    if (st.failure === null && st.parseError === null) p.end();
  } finally {
    closeSync(fd);
  }
  if (st.failure !== null) throw st.failure.err;
  if (st.parseError !== null || !st.ended)
    throw new HostError("ImageInvalid", `${what} is not a readable tar archive`, {
      cause: st.parseError ?? new Error("the archive ended early"),
    });
}
