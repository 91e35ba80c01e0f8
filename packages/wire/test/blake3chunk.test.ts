// The one-chunk BLAKE3 of blake3chunk.ts (chosen by blake3.ts for short inputs): every official
// vector of at most 1024 bytes, then random inputs and offsets against hash-wasm and @noble/hashes,
// two independent implementations.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { blake3 as nobleBlake3 } from "@noble/hashes/blake3.js";
import { createBLAKE3 } from "hash-wasm";
import { blake3, createBlake3Chunk, toHex, SMALL_INPUT_MAX } from "@sbx/wire";
import { ChunkHasher, CHUNK_LEN } from "../src/blake3chunk.ts";
import { readExternal } from "./shared.ts";

interface Case {
  input_len: number;
  hash: string;
}
const tv = readExternal("blake3/test_vectors.json") as { cases: Case[] };
const wasm = await createBLAKE3(256);
const wasmHex = (d: Uint8Array): string => {
  wasm.init();
  wasm.update(d);
  return wasm.digest("hex");
};

function pattern(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = i % 251;
  return b;
}

/** digest hashes `data` through a fresh input buffer left dirty past the input, at `outOff`. */
function digest(h: ChunkHasher, data: Uint8Array, outOff = 0): string {
  h.input.fill(0xcd);
  h.input.set(data);
  const out = new Uint8Array(outOff + 32 + 3).fill(0xaa);
  h.digestInto(data.length, out, outOff);
  assert.deepEqual([...out.subarray(0, outOff), ...out.subarray(outOff + 32)], Array(outOff + 3).fill(0xaa));
  return toHex(out.subarray(outOff, outOff + 32));
}

test("every official case of at most one chunk, through the JS hasher, the wire's choice and blake3", () => {
  assert.equal(SMALL_INPUT_MAX, CHUNK_LEN);
  const h = new ChunkHasher();
  const chosen = createBlake3Chunk();
  let n = 0;
  for (const [i, c] of tv.cases.entries()) {
    if (c.input_len > CHUNK_LEN) continue;
    n++;
    const want = c.hash.slice(0, 64);
    assert.equal(digest(h, pattern(c.input_len), i % 7), want, `case ${i} len ${c.input_len}`);
    chosen.input.set(pattern(c.input_len));
    const out = new Uint8Array(32);
    chosen.digestInto(c.input_len, out, 0);
    assert.equal(toHex(out), want, `case ${i} len ${c.input_len} createBlake3Chunk`);
    assert.equal(toHex(blake3(pattern(c.input_len))), want, `case ${i} blake3`);
  }
  assert.ok(n >= 15, `${n} cases of at most 1024 bytes`);
});

test("random inputs at random output offsets agree with hash-wasm and @noble/hashes", () => {
  const h = new ChunkHasher();
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 0, maxLength: CHUNK_LEN }), fc.nat(40), (data, outOff) => {
      const got = digest(h, data, outOff);
      assert.equal(got, wasmHex(data), `len ${data.length}: hash-wasm`);
      assert.equal(got, toHex(nobleBlake3(data)), `len ${data.length}: noble`);
    }),
    { numRuns: 2000 },
  );
});

test("every length 0..1024, so each block boundary, against hash-wasm", () => {
  const h = new ChunkHasher();
  for (let n = 0; n <= CHUNK_LEN; n++) assert.equal(digest(h, pattern(n)), wasmHex(pattern(n)), `len ${n}`);
});

test("blake3 agrees with hash-wasm on both sides of its JS / hash-wasm / native cut-overs", () => {
  for (const n of [766, 767, 768, 769, 770, 1023, 1024, 1025]) {
    const input = pattern(n);
    assert.equal(toHex(blake3(input)), wasmHex(input), `len ${n}`);
  }
});

test("digestInto refuses a length outside 0..1024 or an output range outside the buffer", () => {
  const h = new ChunkHasher();
  const out = new Uint8Array(40);
  const bad: [number, number][] = [
    [-1, 0],
    [CHUNK_LEN + 1, 0],
    [0.5, 0],
    [10, 9],
    [10, -1],
    [10, 1.5],
  ];
  for (const [i, [len, o]] of bad.entries())
    assert.throws(() => h.digestInto(len, out, o), RangeError, `case ${i}`);
});
