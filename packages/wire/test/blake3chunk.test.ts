// The one-chunk BLAKE3 of blake3chunk.ts (chosen by blake3.ts for inputs ≤ 1024 bytes): every
// official vector of that length, then random inputs, offsets and lengths against hash-wasm and
// @noble/hashes, two independent implementations.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { blake3 as nobleBlake3 } from "@noble/hashes/blake3.js";
import { createBLAKE3 } from "hash-wasm";
import { blake3, blake3Into, toHex } from "@sbx/wire";
import { blake3ChunkInto, CHUNK_LEN } from "../src/blake3chunk.ts";
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

test("every official case of at most one chunk, at offsets in both buffers", () => {
  const small = tv.cases.filter((c) => c.input_len <= CHUNK_LEN);
  assert.ok(small.length >= 15, `${small.length} cases ≤ 1024 bytes`);
  for (const [i, c] of tv.cases.entries()) {
    if (c.input_len > CHUNK_LEN) continue;
    const want = c.hash.slice(0, 64);
    const out = new Uint8Array(32);
    blake3ChunkInto(pattern(c.input_len), 0, c.input_len, out, 0);
    assert.equal(toHex(out), want, `case ${i} len ${c.input_len}`);
    const src = new Uint8Array(c.input_len + 13).fill(0xee);
    src.set(pattern(c.input_len), 7);
    const wide = new Uint8Array(32 + 9).fill(0xaa);
    blake3Into(src, 7, c.input_len, wide, 5);
    assert.equal(toHex(wide.subarray(5, 37)), want, `case ${i} len ${c.input_len} at offsets`);
    assert.deepEqual([...wide.subarray(0, 5), ...wide.subarray(37)], Array(9).fill(0xaa), `case ${i} bounds`);
    assert.equal(toHex(blake3(pattern(c.input_len))), want, `case ${i} blake3`);
  }
});

test("random inputs, offsets and lengths agree with hash-wasm and @noble/hashes", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 0, maxLength: CHUNK_LEN + 40 }),
      fc.nat(),
      fc.nat(),
      fc.nat(40),
      (data, a, b, outOff) => {
        const off = data.length === 0 ? 0 : a % data.length;
        const len = Math.min(CHUNK_LEN, (b % (data.length - off + 1)) | 0);
        const input = data.subarray(off, off + len);
        const out = new Uint8Array(outOff + 32);
        blake3ChunkInto(data, off, len, out, outOff);
        const got = toHex(out.subarray(outOff));
        assert.equal(got, wasmHex(input), `len ${len} off ${off}: hash-wasm`);
        assert.equal(got, toHex(nobleBlake3(input)), `len ${len} off ${off}: noble`);
      },
    ),
    { numRuns: 2000 },
  );
});

test("every length 0..1024 and each block boundary, against hash-wasm", () => {
  const data = pattern(CHUNK_LEN);
  const out = new Uint8Array(32);
  for (let n = 0; n <= CHUNK_LEN; n++) {
    blake3ChunkInto(data, 0, n, out, 0);
    assert.equal(toHex(out), wasmHex(data.subarray(0, n)), `len ${n}`);
  }
});

test("blake3 agrees with hash-wasm on both sides of its JS / hash-wasm / native cut-overs", () => {
  for (const n of [766, 767, 768, 769, 770, 1023, 1024, 1025]) {
    const input = pattern(n);
    assert.equal(toHex(blake3(input)), wasmHex(input), `len ${n}`);
  }
});

test("blake3Into above one chunk agrees with blake3; bad ranges are RangeErrors", () => {
  const data = pattern(5000);
  const out = new Uint8Array(40);
  blake3Into(data, 3, 4000, out, 8);
  assert.equal(toHex(out.subarray(8)), toHex(blake3(data.subarray(3, 4003))));
  const bad: [number, number, number][] = [
    [-1, 10, 0],
    [0, 5001, 0],
    [4990, 11, 0],
    [0, 10, 9],
    [0, 10, -1],
    [0.5, 10, 0],
  ];
  for (const [i, [off, len, o]] of bad.entries()) {
    assert.throws(() => blake3Into(data, off, len, out, o), RangeError, `blake3Into case ${i}`);
    if (len <= CHUNK_LEN)
      assert.throws(() => blake3ChunkInto(data, off, len, out, o), RangeError, `chunk case ${i}`);
  }
  assert.throws(() => blake3ChunkInto(data, 0, CHUNK_LEN + 1, out, 0), RangeError);
});
