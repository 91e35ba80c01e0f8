// §2.3 The one module that chooses the BLAKE3 implementation. Every other module hashes through
// `blake3` / `createBlake3` here, so a browser build and a native build differ only in this file.
//
// Measured (bench/blake3.ts): the native binding wins for bulk input, while for short inputs the
// per-call cost of crossing into native code dominates and hash-wasm is faster. The cut-over length
// is SMALL_INPUT_MAX. Where the native binding cannot load (a browser), hash-wasm serves all sizes.
import { createBLAKE3, type IHasher } from "hash-wasm";

/** An incremental BLAKE3-256 hasher. */
export interface Blake3Hasher {
  update(data: Uint8Array): Blake3Hasher;
  digest(): Uint8Array;
}

interface NativeBinding {
  blake3(input: Uint8Array): Uint8Array;
  Blake3Hasher: new () => { update(input: Uint8Array): unknown; digestBuffer(): Uint8Array };
}

/** Inputs up to this many bytes are hashed by hash-wasm even when the native binding is present. */
export const SMALL_INPUT_MAX = 1024;

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
  if (native === null || data.length <= SMALL_INPUT_MAX) return wasmHash(data);
  return new Uint8Array(native.blake3(data));
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
