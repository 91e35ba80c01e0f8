// §8.2 Standard streams in the journal: each stream cut into chunks of a fixed size (the last one
// shorter), so the same output gives the same chunk digests however the pipe delivered it.
import { digestBytes } from "@sbx/wire";
import type { Journal, StdioStream } from "@sbx/sandbox-attest/journal";

/** Default chunk size: 64 KiB. */
export const DEFAULT_CHUNK_BYTES = 64 * 1024;

/**
 * StreamRecorder keeps a stream's bytes and journals a `stdio.chunk` each time `chunkBytes` of it
 * have arrived; `finish` journals the remainder. The journal numbers the chunks.
 */
export class StreamRecorder {
  readonly #parts: Buffer[] = [];
  #pending: Buffer = Buffer.alloc(0);

  constructor(
    private readonly journal: Journal,
    private readonly stream: StdioStream,
    private readonly chunkBytes: number = DEFAULT_CHUNK_BYTES,
  ) {
    if (!Number.isSafeInteger(chunkBytes) || chunkBytes <= 0)
      throw new RangeError("StreamRecorder: chunkBytes must be a positive integer");
  }

  /** push adds bytes as they arrive and journals every full chunk. */
  push(data: Buffer): void {
    this.#parts.push(data);
    this.#pending = this.#pending.length === 0 ? data : Buffer.concat([this.#pending, data]);
    while (this.#pending.length >= this.chunkBytes) {
      this.#record(this.#pending.subarray(0, this.chunkBytes));
      this.#pending = this.#pending.subarray(this.chunkBytes);
    }
  }

  /** finish journals the last, partial chunk (if any) and returns everything the stream carried. */
  finish(): Buffer {
    if (this.#pending.length > 0) this.#record(this.#pending);
    this.#pending = Buffer.alloc(0);
    return Buffer.concat(this.#parts);
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
