// §2.3 The one module that chooses the BLAKE3 implementation. Every other module hashes through
// `blake3` / `createBlake3` / `createBlake3Chunk` here, so a browser build and a native build differ
// only in this file.
//
// Measured (bench/wire.bench.ts): for short inputs the per-call cost of crossing into WASM or
// native code dominates, so the plain-JS one-chunk compression of blake3chunk.ts is fastest up to
// JS_INPUT_MAX bytes (at 64 bytes in about 0.6× hash-wasm's time; at 768 they are even); from
// there to one chunk the two are within a few per cent, and the native binding wins above (bulk
// input). A hasher from `createBlake3Chunk` takes the JS path for every input of one chunk, since
// its caller builds the input in place and nothing is copied or allocated. Where the native
// binding cannot load (a browser), hash-wasm serves larger inputs; on a big-endian platform,
// where the JS word loads do not apply, hash-wasm also serves small ones. hash-wasm is loaded only
// then: with the native binding and the JS compression, nothing needs it, and loading it (its
// WASM modules decoded and compiled) is about a sixth of a command's start-up.
import type { IHasher } from "hash-wasm";
import { ChunkHasher, chunkHashSupported, CHUNK_LEN } from "./blake3chunk.ts";

/**
 * A one-chunk BLAKE3-256 hasher over its own input buffer: write up to SMALL_INPUT_MAX bytes at
 * input[0, len), then digestInto(len, out, outOff) writes the hash at out[outOff, outOff + 32) and
 * may overwrite the input past `len`.
 */
export interface Blake3Chunk {
  readonly input: Uint8Array;
  digestInto(len: number, out: Uint8Array, outOff: number): void;
}

/** An incremental BLAKE3-256 hasher. */
export interface Blake3Hasher {
  update(data: Uint8Array): Blake3Hasher;
  digest(): Uint8Array;
}

interface NativeBinding {
  blake3(input: Uint8Array): Uint8Array;
  Blake3Hasher: new () => { update(input: Uint8Array): unknown; digestBuffer(): Uint8Array };
}

/** Inputs up to this many bytes (one chunk) are hashed in-process, never by the native binding. */
export const SMALL_INPUT_MAX = CHUNK_LEN;

/** blake3 hashes inputs up to this many bytes with the JS compression (the measured crossover). */
const JS_INPUT_MAX = 768;

async function loadNative(): Promise<NativeBinding | null> {
  try {
    return await import("@napi-rs/blake-hash");
  } catch {
    return null;
  }
}

const native = await loadNative();
const wasm: IHasher | null =
  native !== null && chunkHashSupported ? null : await (await import("hash-wasm")).createBLAKE3(256);

/** Which implementation serves bulk input: "native" (@napi-rs/blake-hash) or "wasm" (hash-wasm). */
export const blake3Backend: "native" | "wasm" = native ? "native" : "wasm";

function wasmOnly(): IHasher {
  if (wasm === null) throw new Error("blake3: hash-wasm is not loaded where native and JS serve every input");
  return wasm;
}

function wasmHash(data: Uint8Array): Uint8Array {
  const wasm = wasmOnly();
  wasm.init();
  wasm.update(data);
  return wasm.digest("binary");
}

const shared = new ChunkHasher();

/** blake3 returns the 32-byte BLAKE3 hash of `data` (§2.3). */
export function blake3(data: Uint8Array): Uint8Array {
  // With the native binding, the JS compression serves every one-chunk input (within a few per
  // cent of hash-wasm from JS_INPUT_MAX up), so hash-wasm is not loaded at all.
  if (chunkHashSupported && data.length <= (native === null ? JS_INPUT_MAX : SMALL_INPUT_MAX)) {
    const out = new Uint8Array(32);
    shared.input.set(data);
    shared.digestInto(data.length, out, 0);
    return out;
  }
  if (native === null || data.length <= SMALL_INPUT_MAX) return wasmHash(data);
  return new Uint8Array(native.blake3(data));
}

/**
 * createBlake3Chunk returns a one-chunk hasher (§2.3): the JS compression, which copies and
 * allocates nothing per hash, or hash-wasm where the JS word loads do not apply.
 */
export function createBlake3Chunk(): Blake3Chunk {
  if (chunkHashSupported) return new ChunkHasher();
  const input = new Uint8Array(SMALL_INPUT_MAX);
  return {
    input,
    digestInto(len, out, outOff) {
      if (!Number.isInteger(len) || len < 0 || len > SMALL_INPUT_MAX)
        throw new RangeError(`digestInto: ${len} bytes is not 0..${SMALL_INPUT_MAX}`);
      out.set(wasmHash(input.subarray(0, len)), outOff);
    },
  };
}

/** createBlake3 returns an incremental hasher, native where available (used for files). */
export function createBlake3(): Blake3Hasher {
  if (native !== null) {
    const h = new native.Blake3Hasher();
    const api: Blake3Hasher = {
      update(d) {
        h.update(d);
        return api;
      },
      digest: () => new Uint8Array(h.digestBuffer()),
    };
    return api;
  }
  return wasmIncremental();
}

function wasmIncremental(): Blake3Hasher {
  // A private WASM instance per incremental hasher is costly; chunks are kept and hashed at the end
  // through the shared instance, which is synchronous and therefore never interleaved.
  const parts: Uint8Array[] = [];
  const api: Blake3Hasher = {
    update(d) {
      parts.push(d.slice());
      return api;
    },
    digest() {
      const wasm = wasmOnly();
      wasm.init();
      for (const p of parts) wasm.update(p);
      return wasm.digest("binary");
    },
  };
  return api;
}
