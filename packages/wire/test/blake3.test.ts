// Official BLAKE3 vectors (hash, keyed_hash, derive_key), through every implementation we ship.
import { test } from "node:test";
import assert from "node:assert/strict";
import { blake3 as nobleBlake3 } from "@noble/hashes/blake3.js";
import { Blake3Hasher as NativeHasher } from "@napi-rs/blake-hash";
import { createBLAKE3 } from "hash-wasm";
import { blake3, createBlake3, digestBytes, fromHex, toHex, utf8, SMALL_INPUT_MAX } from "@sbx/wire";
import { readExternal } from "./shared.ts";

interface Case {
  input_len: number;
  hash: string;
  keyed_hash: string;
  derive_key: string;
}
const tv = readExternal("blake3/test_vectors.json") as { key: string; context_string: string; cases: Case[] };

function pattern(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = i % 251;
  return b;
}

test("every official case, hash mode: the wire blake3 and the incremental hasher", () => {
  assert.ok(tv.cases.length >= 30);
  tv.cases.forEach((c, i) => {
    const input = pattern(c.input_len);
    assert.equal(toHex(blake3(input)), c.hash.slice(0, 64), `case ${i} len ${c.input_len}`);
    const h = createBlake3();
    for (let off = 0; off < input.length; off += 1000) h.update(input.subarray(off, off + 1000));
    assert.equal(toHex(h.digest()), c.hash.slice(0, 64), `incremental case ${i}`);
    assert.equal(digestBytes(input), `blake3:${c.hash.slice(0, 64)}`);
  });
});

test("every official case, hash mode with extended output, hash-wasm and @noble/hashes", async () => {
  const wasm = await createBLAKE3(tv.cases[0]!.hash.length * 4);
  tv.cases.forEach((c, i) => {
    const input = pattern(c.input_len);
    wasm.init();
    wasm.update(input);
    assert.equal(wasm.digest("hex"), c.hash, `hash-wasm case ${i}`);
    assert.equal(toHex(nobleBlake3(input, { dkLen: c.hash.length / 2 })), c.hash, `noble case ${i}`);
  });
});

test("every official case, keyed_hash mode (native, hash-wasm, noble)", async () => {
  const key = utf8(tv.key);
  const wasm = await createBLAKE3(tv.cases[0]!.keyed_hash.length * 4, key);
  tv.cases.forEach((c, i) => {
    const input = pattern(c.input_len);
    const n = NativeHasher.newKeyed(Buffer.from(key));
    n.update(input);
    assert.equal(n.digest("hex"), c.keyed_hash.slice(0, 64), `native case ${i}`);
    wasm.init();
    wasm.update(input);
    assert.equal(wasm.digest("hex"), c.keyed_hash, `hash-wasm case ${i}`);
    assert.equal(
      toHex(nobleBlake3(input, { key, dkLen: c.keyed_hash.length / 2 })),
      c.keyed_hash,
      `noble case ${i}`,
    );
  });
});

test("every official case, derive_key mode (native, noble)", () => {
  tv.cases.forEach((c, i) => {
    const input = pattern(c.input_len);
    const n = NativeHasher.newDeriveKey(tv.context_string);
    n.update(input);
    assert.equal(n.digest("hex"), c.derive_key.slice(0, 64), `native case ${i}`);
    assert.equal(
      toHex(nobleBlake3(input, { context: utf8(tv.context_string), dkLen: c.derive_key.length / 2 })),
      c.derive_key,
      `noble case ${i}`,
    );
  });
});

test("the size cut-over gives the same digest on both sides of SMALL_INPUT_MAX", () => {
  for (const n of [SMALL_INPUT_MAX - 1, SMALL_INPUT_MAX, SMALL_INPUT_MAX + 1]) {
    const input = pattern(n);
    assert.equal(toHex(blake3(input)), toHex(nobleBlake3(input)), `len ${n}`);
  }
});

test("digest strings are lowercase blake3:<64 hex>", () => {
  assert.match(digestBytes(new Uint8Array(0)), /^blake3:[0-9a-f]{64}$/);
  assert.deepEqual(fromHex(digestBytes(new Uint8Array(0)).slice(7)), blake3(new Uint8Array(0)));
});
