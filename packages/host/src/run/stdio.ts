// §8.2 Standard streams in the journal: each stream cut into chunks of a fixed size (the last one
// shorter), so the same output gives the same chunk digests however the pipe delivered it. The
// bytes go, as they arrive, to a file (the journal's copy) or are kept in memory, never both; the
// whole stream is hashed as it goes.
import { closeSync, openSync, writeSync } from "node:fs";
import { createBlake3, digestBytes, formatDigest, type Digest } from "@sbx/wire";
import type { Journal, StdioStream } from "@sbx/sandbox-attest/journal";

/** Default chunk size: 64 KiB. */
export const DEFAULT_CHUNK_BYTES = 64 * 1024;

/** What a stream carried: its bytes (in memory, or empty when they went to a file), size and digest. */
export interface StreamSummary {
  readonly bytes: Buffer;
  readonly length: number;
  /** BLAKE3 of the whole stream. */
  readonly digest: Digest;
  /** The file the stream was written to as it arrived, or null. */
  readonly file: string | null;
}

/**
 * StreamRecorder journals a `stdio.chunk` each time `chunkBytes` of a stream have arrived; `finish`
 * journals the remainder. With `file`, every byte is appended to that file as it arrives (created
 * with O_EXCL, mode 0600, or already open as `fd`) and nothing is kept in memory. The journal
 * numbers the chunks.
 */
export class StreamRecorder {
  readonly #parts: Buffer[] = [];
  readonly #hash = createBlake3();
  readonly #fd: number | null;
  #pending: Buffer = Buffer.alloc(0);
  #length = 0;

  constructor(
    private readonly journal: Journal,
    private readonly stream: StdioStream,
    private readonly chunkBytes: number = DEFAULT_CHUNK_BYTES,
    private readonly file: string | null = null,
    fd?: number,
  ) {
    if (!Number.isSafeInteger(chunkBytes) || chunkBytes <= 0)
      throw new RangeError("StreamRecorder: chunkBytes must be a positive integer");
    // A descriptor the caller created (without following a link, §12) is used as given.
    this.#fd = fd ?? (file === null ? null : openSync(file, "wx", 0o600));
  }

  /** push adds bytes as they arrive and journals every full chunk. */
  push(data: Buffer): void {
    if (this.#fd === null) this.#parts.push(data);
    else for (let off = 0; off < data.length;) off += writeSync(this.#fd, data, off);
    this.#hash.update(data);
    this.#length += data.length;
    this.#pending = this.#pending.length === 0 ? data : Buffer.concat([this.#pending, data]);
    while (this.#pending.length >= this.chunkBytes) {
      this.#record(this.#pending.subarray(0, this.chunkBytes));
      this.#pending = this.#pending.subarray(this.chunkBytes);
    }
  }

  /** finish journals the last, partial chunk (if any), closes the file, and says what the stream carried. */
  finish(): StreamSummary {
    if (this.#pending.length > 0) this.#record(this.#pending);
    this.#pending = Buffer.alloc(0);
    if (this.#fd !== null) closeSync(this.#fd);
    return {
      bytes: Buffer.concat(this.#parts),
      length: this.#length,
      digest: formatDigest(this.#hash.digest()),
      file: this.file,
    };
  }

  #record(chunk: Buffer): void {
    this.journal.append({
      type: "stdio.chunk",
      stream: this.stream,
      digest: digestBytes(chunk),
      length: String(chunk.length),
    });
  }
}
