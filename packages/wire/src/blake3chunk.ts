// §2.3 BLAKE3-256 of an input of at most one chunk (1024 bytes), in plain JS over Int32 locals,
// read from the hasher's own input buffer and written into the caller's buffer at an offset: no
// copy and no allocation per hash. blake3.ts chooses it for short inputs, where crossing into WASM
// or native code costs more than the hashing (bench/wire.bench.ts). test/blake3chunk.test.ts
// checks it against every official vector of length ≤ 1024 and against hash-wasm and
// @noble/hashes on random inputs.
//
// An input of one chunk is hashed as that chunk alone, which is then the root (BLAKE3 spec: chunk
// chaining and the root node): its 64-byte blocks are compressed in turn from the IV with chunk
// counter 0, CHUNK_START on the first block and CHUNK_END | ROOT on the last, whose length is the
// bytes it holds (0 for the empty input); the hash is the root's first 8 output words,
// little-endian.

/** The largest input a ChunkHasher takes: one BLAKE3 chunk. */
export const CHUNK_LEN = 1024;

/** Whether this platform stores Int32 words little-endian, as the message-word loads here assume. */
export const chunkHashSupported: boolean = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

const CHUNK_START = 1;
const CHUNK_END = 2;
const ROOT = 8;
const IV = Int32Array.of(
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
);

// The chaining value, shared: each digest computes it from the IV to the end without yielding.
const cv = new Int32Array(8);

const r16 = (x: number): number => (x >>> 16) | (x << 16);
const r12 = (x: number): number => (x >>> 12) | (x << 20);
const r8 = (x: number): number => (x >>> 8) | (x << 24);
const r7 = (x: number): number => (x >>> 7) | (x << 25);

/**
 * ChunkHasher hashes inputs of at most one chunk written into its own buffer, so a caller can
 * build the input in place (e.g. with TextEncoder.encodeInto) and receive the hash at an offset of
 * its own buffer: nothing is copied or allocated per hash.
 */
export class ChunkHasher {
  /** The input buffer: write the input at input[0, len), then call digestInto(len, …). */
  readonly input = new Uint8Array(CHUNK_LEN);
  readonly #words = new Int32Array(this.input.buffer);

  /**
   * digestInto writes the 32-byte BLAKE3-256 hash of input[0, len) into out[outOff, outOff + 32)
   * (§2.3), and zeroes the input from `len` to the end of its last 64-byte block. Precondition:
   * chunkHashSupported. Throws RangeError for len outside 0..CHUNK_LEN or a range outside `out`.
   */
  digestInto(len: number, out: Uint8Array, outOff: number): void {
    if (
      !Number.isInteger(len) ||
      !Number.isInteger(outOff) ||
      len < 0 ||
      len > CHUNK_LEN ||
      outOff < 0 ||
      outOff + 32 > out.length
    )
      throw new RangeError(`digestInto: ${len} bytes into [${outOff}, +32) of ${out.length}`);
    const last = len === 0 ? 0 : (len - 1) >> 6;
    this.#pad(len, (last + 1) << 4);
    startChain();
    for (let b = 0; b < last; b++) compress(this.#words, b << 4, 64, b === 0 ? CHUNK_START : 0);
    compress(this.#words, last << 4, len - (last << 6), (last === 0 ? CHUNK_START : 0) | CHUNK_END | ROOT);
    writeHash(out, outOff);
  }

  /** #pad zeroes the input from byte `len` to word `end`: bytes up to a word boundary, then words. */
  #pad(len: number, end: number): void {
    for (let i = len; i % 4 !== 0; i++) this.input[i] = 0;
    for (let w = (len + 3) >> 2; w < end; w++) this.#words[w] = 0;
  }
}

/** startChain sets the chaining value to the IV. */
function startChain(): void {
  for (let i = 0; i < 8; i++) cv[i] = IV[i]!;
}

/** writeHash writes the chaining value as 32 little-endian bytes at out[outOff]. */
function writeHash(out: Uint8Array, outOff: number): void {
  for (let i = 0; i < 8; i++) {
    const w = cv[i]!;
    const at = outOff + 4 * i;
    out[at] = w;
    out[at + 1] = w >>> 8;
    out[at + 2] = w >>> 16;
    out[at + 3] = w >>> 24;
  }
}

/**
 * compress runs the BLAKE3 compression function on the block at word `o` of `w` with the
 * chaining value `cv`, chunk counter 0, and replaces `cv` by the first 8 output words. The seven
 * rounds are unrolled with the message schedule applied (each round's words are the previous
 * round's permuted by 2 6 3 10 7 0 4 13 1 11 12 5 9 14 15 8), so every word stays in a local:
 * one long function on purpose, since a loop over rounds that permutes the locals measured 10–30%
 * slower and one that indexes the schedule from a table about 2× slower.
 */
function compress(w: Int32Array, o: number, blockLen: number, flags: number): void {
  const m0 = w[o]!;
  const m1 = w[o + 1]!;
  const m2 = w[o + 2]!;
  const m3 = w[o + 3]!;
  const m4 = w[o + 4]!;
  const m5 = w[o + 5]!;
  const m6 = w[o + 6]!;
  const m7 = w[o + 7]!;
  const m8 = w[o + 8]!;
  const m9 = w[o + 9]!;
  const m10 = w[o + 10]!;
  const m11 = w[o + 11]!;
  const m12 = w[o + 12]!;
  const m13 = w[o + 13]!;
  const m14 = w[o + 14]!;
  const m15 = w[o + 15]!;
  let v0 = cv[0]!,
    v1 = cv[1]!,
    v2 = cv[2]!,
    v3 = cv[3]!,
    v4 = cv[4]!,
    v5 = cv[5]!,
    v6 = cv[6]!,
    v7 = cv[7]!;
  let v8 = IV[0]!,
    v9 = IV[1]!,
    v10 = IV[2]!,
    v11 = IV[3]!,
    v12 = 0,
    v13 = 0,
    v14 = blockLen,
    v15 = flags;
  // Each pair of lines is one G(a, b, c, d, mx, my): columns, then diagonals.
  // prettier-ignore
  {
    // round 1: message words 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15
    v0 = (v0 + v4 + m0) | 0; v12 = r16(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r12(v4 ^ v8);
    v0 = (v0 + v4 + m1) | 0; v12 = r8(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r7(v4 ^ v8);
    v1 = (v1 + v5 + m2) | 0; v13 = r16(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r12(v5 ^ v9);
    v1 = (v1 + v5 + m3) | 0; v13 = r8(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r7(v5 ^ v9);
    v2 = (v2 + v6 + m4) | 0; v14 = r16(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r12(v6 ^ v10);
    v2 = (v2 + v6 + m5) | 0; v14 = r8(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r7(v6 ^ v10);
    v3 = (v3 + v7 + m6) | 0; v15 = r16(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r12(v7 ^ v11);
    v3 = (v3 + v7 + m7) | 0; v15 = r8(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r7(v7 ^ v11);
    v0 = (v0 + v5 + m8) | 0; v15 = r16(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r12(v5 ^ v10);
    v0 = (v0 + v5 + m9) | 0; v15 = r8(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r7(v5 ^ v10);
    v1 = (v1 + v6 + m10) | 0; v12 = r16(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r12(v6 ^ v11);
    v1 = (v1 + v6 + m11) | 0; v12 = r8(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r7(v6 ^ v11);
    v2 = (v2 + v7 + m12) | 0; v13 = r16(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r12(v7 ^ v8);
    v2 = (v2 + v7 + m13) | 0; v13 = r8(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r7(v7 ^ v8);
    v3 = (v3 + v4 + m14) | 0; v14 = r16(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r12(v4 ^ v9);
    v3 = (v3 + v4 + m15) | 0; v14 = r8(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r7(v4 ^ v9);
    // round 2: message words 2 6 3 10 7 0 4 13 1 11 12 5 9 14 15 8
    v0 = (v0 + v4 + m2) | 0; v12 = r16(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r12(v4 ^ v8);
    v0 = (v0 + v4 + m6) | 0; v12 = r8(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r7(v4 ^ v8);
    v1 = (v1 + v5 + m3) | 0; v13 = r16(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r12(v5 ^ v9);
    v1 = (v1 + v5 + m10) | 0; v13 = r8(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r7(v5 ^ v9);
    v2 = (v2 + v6 + m7) | 0; v14 = r16(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r12(v6 ^ v10);
    v2 = (v2 + v6 + m0) | 0; v14 = r8(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r7(v6 ^ v10);
    v3 = (v3 + v7 + m4) | 0; v15 = r16(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r12(v7 ^ v11);
    v3 = (v3 + v7 + m13) | 0; v15 = r8(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r7(v7 ^ v11);
    v0 = (v0 + v5 + m1) | 0; v15 = r16(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r12(v5 ^ v10);
    v0 = (v0 + v5 + m11) | 0; v15 = r8(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r7(v5 ^ v10);
    v1 = (v1 + v6 + m12) | 0; v12 = r16(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r12(v6 ^ v11);
    v1 = (v1 + v6 + m5) | 0; v12 = r8(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r7(v6 ^ v11);
    v2 = (v2 + v7 + m9) | 0; v13 = r16(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r12(v7 ^ v8);
    v2 = (v2 + v7 + m14) | 0; v13 = r8(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r7(v7 ^ v8);
    v3 = (v3 + v4 + m15) | 0; v14 = r16(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r12(v4 ^ v9);
    v3 = (v3 + v4 + m8) | 0; v14 = r8(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r7(v4 ^ v9);
    // round 3: message words 3 4 10 12 13 2 7 14 6 5 9 0 11 15 8 1
    v0 = (v0 + v4 + m3) | 0; v12 = r16(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r12(v4 ^ v8);
    v0 = (v0 + v4 + m4) | 0; v12 = r8(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r7(v4 ^ v8);
    v1 = (v1 + v5 + m10) | 0; v13 = r16(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r12(v5 ^ v9);
    v1 = (v1 + v5 + m12) | 0; v13 = r8(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r7(v5 ^ v9);
    v2 = (v2 + v6 + m13) | 0; v14 = r16(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r12(v6 ^ v10);
    v2 = (v2 + v6 + m2) | 0; v14 = r8(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r7(v6 ^ v10);
    v3 = (v3 + v7 + m7) | 0; v15 = r16(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r12(v7 ^ v11);
    v3 = (v3 + v7 + m14) | 0; v15 = r8(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r7(v7 ^ v11);
    v0 = (v0 + v5 + m6) | 0; v15 = r16(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r12(v5 ^ v10);
    v0 = (v0 + v5 + m5) | 0; v15 = r8(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r7(v5 ^ v10);
    v1 = (v1 + v6 + m9) | 0; v12 = r16(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r12(v6 ^ v11);
    v1 = (v1 + v6 + m0) | 0; v12 = r8(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r7(v6 ^ v11);
    v2 = (v2 + v7 + m11) | 0; v13 = r16(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r12(v7 ^ v8);
    v2 = (v2 + v7 + m15) | 0; v13 = r8(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r7(v7 ^ v8);
    v3 = (v3 + v4 + m8) | 0; v14 = r16(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r12(v4 ^ v9);
    v3 = (v3 + v4 + m1) | 0; v14 = r8(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r7(v4 ^ v9);
    // round 4: message words 10 7 12 9 14 3 13 15 4 0 11 2 5 8 1 6
    v0 = (v0 + v4 + m10) | 0; v12 = r16(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r12(v4 ^ v8);
    v0 = (v0 + v4 + m7) | 0; v12 = r8(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r7(v4 ^ v8);
    v1 = (v1 + v5 + m12) | 0; v13 = r16(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r12(v5 ^ v9);
    v1 = (v1 + v5 + m9) | 0; v13 = r8(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r7(v5 ^ v9);
    v2 = (v2 + v6 + m14) | 0; v14 = r16(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r12(v6 ^ v10);
    v2 = (v2 + v6 + m3) | 0; v14 = r8(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r7(v6 ^ v10);
    v3 = (v3 + v7 + m13) | 0; v15 = r16(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r12(v7 ^ v11);
    v3 = (v3 + v7 + m15) | 0; v15 = r8(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r7(v7 ^ v11);
    v0 = (v0 + v5 + m4) | 0; v15 = r16(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r12(v5 ^ v10);
    v0 = (v0 + v5 + m0) | 0; v15 = r8(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r7(v5 ^ v10);
    v1 = (v1 + v6 + m11) | 0; v12 = r16(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r12(v6 ^ v11);
    v1 = (v1 + v6 + m2) | 0; v12 = r8(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r7(v6 ^ v11);
    v2 = (v2 + v7 + m5) | 0; v13 = r16(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r12(v7 ^ v8);
    v2 = (v2 + v7 + m8) | 0; v13 = r8(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r7(v7 ^ v8);
    v3 = (v3 + v4 + m1) | 0; v14 = r16(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r12(v4 ^ v9);
    v3 = (v3 + v4 + m6) | 0; v14 = r8(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r7(v4 ^ v9);
    // round 5: message words 12 13 9 11 15 10 14 8 7 2 5 3 0 1 6 4
    v0 = (v0 + v4 + m12) | 0; v12 = r16(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r12(v4 ^ v8);
    v0 = (v0 + v4 + m13) | 0; v12 = r8(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r7(v4 ^ v8);
    v1 = (v1 + v5 + m9) | 0; v13 = r16(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r12(v5 ^ v9);
    v1 = (v1 + v5 + m11) | 0; v13 = r8(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r7(v5 ^ v9);
    v2 = (v2 + v6 + m15) | 0; v14 = r16(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r12(v6 ^ v10);
    v2 = (v2 + v6 + m10) | 0; v14 = r8(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r7(v6 ^ v10);
    v3 = (v3 + v7 + m14) | 0; v15 = r16(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r12(v7 ^ v11);
    v3 = (v3 + v7 + m8) | 0; v15 = r8(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r7(v7 ^ v11);
    v0 = (v0 + v5 + m7) | 0; v15 = r16(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r12(v5 ^ v10);
    v0 = (v0 + v5 + m2) | 0; v15 = r8(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r7(v5 ^ v10);
    v1 = (v1 + v6 + m5) | 0; v12 = r16(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r12(v6 ^ v11);
    v1 = (v1 + v6 + m3) | 0; v12 = r8(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r7(v6 ^ v11);
    v2 = (v2 + v7 + m0) | 0; v13 = r16(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r12(v7 ^ v8);
    v2 = (v2 + v7 + m1) | 0; v13 = r8(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r7(v7 ^ v8);
    v3 = (v3 + v4 + m6) | 0; v14 = r16(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r12(v4 ^ v9);
    v3 = (v3 + v4 + m4) | 0; v14 = r8(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r7(v4 ^ v9);
    // round 6: message words 9 14 11 5 8 12 15 1 13 3 0 10 2 6 4 7
    v0 = (v0 + v4 + m9) | 0; v12 = r16(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r12(v4 ^ v8);
    v0 = (v0 + v4 + m14) | 0; v12 = r8(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r7(v4 ^ v8);
    v1 = (v1 + v5 + m11) | 0; v13 = r16(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r12(v5 ^ v9);
    v1 = (v1 + v5 + m5) | 0; v13 = r8(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r7(v5 ^ v9);
    v2 = (v2 + v6 + m8) | 0; v14 = r16(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r12(v6 ^ v10);
    v2 = (v2 + v6 + m12) | 0; v14 = r8(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r7(v6 ^ v10);
    v3 = (v3 + v7 + m15) | 0; v15 = r16(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r12(v7 ^ v11);
    v3 = (v3 + v7 + m1) | 0; v15 = r8(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r7(v7 ^ v11);
    v0 = (v0 + v5 + m13) | 0; v15 = r16(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r12(v5 ^ v10);
    v0 = (v0 + v5 + m3) | 0; v15 = r8(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r7(v5 ^ v10);
    v1 = (v1 + v6 + m0) | 0; v12 = r16(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r12(v6 ^ v11);
    v1 = (v1 + v6 + m10) | 0; v12 = r8(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r7(v6 ^ v11);
    v2 = (v2 + v7 + m2) | 0; v13 = r16(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r12(v7 ^ v8);
    v2 = (v2 + v7 + m6) | 0; v13 = r8(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r7(v7 ^ v8);
    v3 = (v3 + v4 + m4) | 0; v14 = r16(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r12(v4 ^ v9);
    v3 = (v3 + v4 + m7) | 0; v14 = r8(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r7(v4 ^ v9);
    // round 7: message words 11 15 5 0 1 9 8 6 14 10 2 12 3 4 7 13
    v0 = (v0 + v4 + m11) | 0; v12 = r16(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r12(v4 ^ v8);
    v0 = (v0 + v4 + m15) | 0; v12 = r8(v12 ^ v0); v8 = (v8 + v12) | 0; v4 = r7(v4 ^ v8);
    v1 = (v1 + v5 + m5) | 0; v13 = r16(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r12(v5 ^ v9);
    v1 = (v1 + v5 + m0) | 0; v13 = r8(v13 ^ v1); v9 = (v9 + v13) | 0; v5 = r7(v5 ^ v9);
    v2 = (v2 + v6 + m1) | 0; v14 = r16(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r12(v6 ^ v10);
    v2 = (v2 + v6 + m9) | 0; v14 = r8(v14 ^ v2); v10 = (v10 + v14) | 0; v6 = r7(v6 ^ v10);
    v3 = (v3 + v7 + m8) | 0; v15 = r16(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r12(v7 ^ v11);
    v3 = (v3 + v7 + m6) | 0; v15 = r8(v15 ^ v3); v11 = (v11 + v15) | 0; v7 = r7(v7 ^ v11);
    v0 = (v0 + v5 + m14) | 0; v15 = r16(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r12(v5 ^ v10);
    v0 = (v0 + v5 + m10) | 0; v15 = r8(v15 ^ v0); v10 = (v10 + v15) | 0; v5 = r7(v5 ^ v10);
    v1 = (v1 + v6 + m2) | 0; v12 = r16(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r12(v6 ^ v11);
    v1 = (v1 + v6 + m12) | 0; v12 = r8(v12 ^ v1); v11 = (v11 + v12) | 0; v6 = r7(v6 ^ v11);
    v2 = (v2 + v7 + m3) | 0; v13 = r16(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r12(v7 ^ v8);
    v2 = (v2 + v7 + m4) | 0; v13 = r8(v13 ^ v2); v8 = (v8 + v13) | 0; v7 = r7(v7 ^ v8);
    v3 = (v3 + v4 + m7) | 0; v14 = r16(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r12(v4 ^ v9);
    v3 = (v3 + v4 + m13) | 0; v14 = r8(v14 ^ v3); v9 = (v9 + v14) | 0; v4 = r7(v4 ^ v9);
  }
  cv[0] = v0 ^ v8;
  cv[1] = v1 ^ v9;
  cv[2] = v2 ^ v10;
  cv[3] = v3 ^ v11;
  cv[4] = v4 ^ v12;
  cv[5] = v5 ^ v13;
  cv[6] = v6 ^ v14;
  cv[7] = v7 ^ v15;
}
