// §2.3 The one module that chooses the BLAKE3 implementation. Every other module hashes through
// `blake3` / `blake3Into` / `createBlake3` here, so a browser build and a native build differ only in
// this file.
//
// Measured (bench/wire.bench.ts): for short inputs the per-call cost of crossing into WASM or
// native code dominates, so the plain-JS one-chunk compression of blake3chunk.ts is fastest up to
// JS_INPUT_MAX bytes (at 64 bytes in 0.6× hash-wasm's time; at 768 they are even); hash-wasm then wins
// by a few per cent up to one chunk, and the native binding above (bulk input). `blake3Into`
// takes the JS path for every input of one chunk, since it then allocates nothing. Where the
// native binding cannot load (a browser), hash-wasm serves larger inputs; on a big-endian
// platform, where the JS word loads do not apply, hash-wasm also serves small ones.
import { createBLAKE3, type IHasher } from "hash-wasm";
import { blake3ChunkInto, checkRanges, chunkHashSupported, CHUNK_LEN } from "./blake3chunk.ts";

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
const wasm: IHasher = await createBLAKE3(256);

/** Which implementation serves bulk input: "native" (@napi-rs/blake-hash) or "wasm" (hash-wasm). */
export const blake3Backend: "native" | "wasm" = native ? "native" : "wasm";

function wasmHash(data: Uint8Array): Uint8Array {
  wasm.init();
  wasm.update(data);
  return wasm.digest("binary");
}

/** blake3 returns the 32-byte BLAKE3 hash of `data` (§2.3). */
export function blake3(data: Uint8Array): Uint8Array {
  if (data.length <= JS_INPUT_MAX && chunkHashSupported) {
    const out = new Uint8Array(32);
    blake3ChunkInto(data, 0, data.length, out, 0);
    return out;
  }
  if (native === null || data.length <= SMALL_INPUT_MAX) return wasmHash(data);
  return new Uint8Array(native.blake3(data));
}

/**
 * blake3Into writes the 32-byte BLAKE3 hash of src[off, off + len) into out[outOff, outOff + 32)
 * (§2.3), allocating nothing for inputs of at most SMALL_INPUT_MAX bytes. Throws RangeError for a
 * range outside `src` or `out`.
 */
export function blake3Into(src: Uint8Array, off: number, len: number, out: Uint8Array, outOff: number): void {
  if (len <= SMALL_INPUT_MAX && chunkHashSupported) {
    blake3ChunkInto(src, off, len, out, outOff);
    return;
  }
  checkRanges("blake3Into", src, off, len, out, outOff);
  out.set(blake3(src.subarray(off, off + len)), outOff);
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
      wasm.init();
      for (const p of parts) wasm.update(p);
      return wasm.digest("binary");
    },
  };
  return api;
}
