// Content-addressed objects in PostgreSQL, streamed in chunks of at most CHUNK_BYTES so that a 1 GiB
// file never sits in memory. A chunk is stored once under its own BLAKE3 address (deduplicated across
// objects); an object is its size and the ordered list of its chunks, written in one transaction once
// every chunk is in, so a half-uploaded object is never visible (orphan chunks are harmless).
// An object of at most one chunk (most files of a workspace) is its chunk, object row and chunk list
// in one statement: one round trip and one commit.
// Verified on the way in (the caller may name the address it expects: `ObjectMismatch` otherwise)
// and on the way out (each chunk against its address, the whole against the object's address and
// size, the last chunk held back until the whole checks).
import type { Pool } from "pg";
import { createBlake3, digestBytes, formatDigest, parseDigest, type Digest } from "@sbx/wire";
import { checkObject } from "@sbx/sandbox-attest/store";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { HostError } from "../errors.ts";
import { faultPoint } from "../store/fault.ts";
import { tx, withRetry } from "./conn.ts";

/** The largest chunk stored. */
export const CHUNK_BYTES = 1 << 20;

const raw = (a: Digest) => Buffer.from(parseDigest(a));

/** Splits a stream of byte arrays into chunks of exactly CHUNK_BYTES (the last one shorter). */
async function* rechunk(src: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let buf = new Uint8Array(CHUNK_BYTES);
  let fill = 0;
  for await (const piece of src) {
    for (let off = 0; off < piece.length;) {
      const n = Math.min(CHUNK_BYTES - fill, piece.length - off);
      buf.set(piece.subarray(off, off + n), fill);
      fill += n;
      off += n;
      if (fill === CHUNK_BYTES) {
        yield buf;
        buf = new Uint8Array(CHUNK_BYTES);
        fill = 0;
      }
    }
  }
  if (fill > 0) yield buf.subarray(0, fill);
}

/** What an upload stored. */
export interface PutResult {
  readonly address: Digest;
  readonly size: number;
}

/**
 * putObjectStream stores the bytes of `src` and returns their address and size; with `expect`, an
 * upload whose bytes do not hash to it is refused (`ObjectMismatch`) and nothing is recorded for it.
 */
export async function putObjectStream(
  pool: Pool,
  retryMs: number,
  src: AsyncIterable<Uint8Array>,
  expect?: Digest,
): Promise<PutResult> {
  const it = rechunk(src)[Symbol.asyncIterator]();
  const first = await it.next();
  const second = first.done === true ? first : await it.next();
  if (second.done === true) {
    // At most one chunk (most files of a workspace): one statement, one commit.
    const bytes = first.done === true ? new Uint8Array() : first.value;
    const address = digestBytes(bytes);
    mismatch(expect, address);
    faultPoint("pg-chunk");
    await withRetry("object upload", retryMs, () => recordSmall(pool, address, bytes));
    return { address, size: bytes.length };
  }
  const h = createBlake3();
  const chunks: Buffer[] = [];
  let size = 0;
  const put = async (chunk: Uint8Array) => {
    h.update(chunk);
    size += chunk.length;
    const a = raw(digestBytes(chunk));
    chunks.push(a);
    await withRetry("object upload", retryMs, () =>
      pool.query({ name: "sbx_chunk_put", text: PUT_CHUNK, values: [a, asBuffer(chunk)] }),
    );
    faultPoint("pg-chunk"); // crash tests: some chunks in, the object not yet recorded
  };
  await put(first.value as Uint8Array);
  await put(second.value);
  for (let r = await it.next(); r.done !== true; r = await it.next()) await put(r.value);
  const address = formatDigest(h.digest());
  mismatch(expect, address);
  await withRetry("object upload", retryMs, () => recordObject(pool, address, size, chunks));
  return { address, size };
}

const PUT_CHUNK = "INSERT INTO sbx_chunks (address, data) VALUES ($1, $2) ON CONFLICT DO NOTHING";
const asBuffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.length);

function mismatch(expect: Digest | undefined, address: Digest): void {
  if (expect !== undefined && expect !== address)
    throw new SandboxAttestError("ObjectMismatch", `upload for ${expect} holds bytes hashing to ${address}`);
}

// An object of at most one chunk in one statement (atomic; idempotent like recordObject): its chunk,
// whose address is the object's own, the object row and, when that row is new, its chunk list. An
// empty object has no chunk.
const PUT_SMALL = {
  name: "sbx_object_put_small",
  text: `WITH c AS (INSERT INTO sbx_chunks (address, data) SELECT $1, $2 WHERE $3 > 0 ON CONFLICT DO NOTHING),
    o AS (INSERT INTO sbx_objects (address, size, chunks) VALUES ($1, $3, CASE WHEN $3 > 0 THEN 1 ELSE 0 END)
          ON CONFLICT DO NOTHING RETURNING address)
    INSERT INTO sbx_object_chunks (address, seq, chunk) SELECT address, 0, address FROM o WHERE $3 > 0`,
};

async function recordSmall(pool: Pool, address: Digest, bytes: Uint8Array): Promise<void> {
  await pool.query(PUT_SMALL, [raw(address), asBuffer(bytes), bytes.length]);
}

// Idempotent: an object already recorded (by us before a lost answer, or by anyone) is left as it is.
async function recordObject(pool: Pool, address: Digest, size: number, chunks: readonly Buffer[]) {
  await tx(pool, async (c) => {
    const r = await c.query(
      "INSERT INTO sbx_objects (address, size, chunks) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
      [raw(address), size, chunks.length],
    );
    if (r.rowCount === 0 || chunks.length === 0) return;
    await c.query(
      "INSERT INTO sbx_object_chunks (address, seq, chunk) SELECT $1, s.i - 1, s.c FROM unnest($2::bytea[]) WITH ORDINALITY AS s(c, i)",
      [raw(address), chunks],
    );
  });
}

/** objectInfo returns an object's size and chunk count, or null when it is not stored. */
export async function objectInfo(
  pool: Pool,
  address: Digest,
): Promise<{ size: number; chunks: number } | null> {
  const r = await pool.query<{ size: string; chunks: number }>(
    "SELECT size, chunks FROM sbx_objects WHERE address = $1",
    [raw(address)],
  );
  const row = r.rows[0];
  return row === undefined ? null : { size: Number(row.size), chunks: row.chunks };
}

async function readChunk(pool: Pool, address: Digest, seq: number): Promise<Uint8Array> {
  const r = await pool.query<{ chunk: Buffer; data: Buffer | null }>(
    "SELECT oc.chunk, c.data FROM sbx_object_chunks oc LEFT JOIN sbx_chunks c ON c.address = oc.chunk WHERE oc.address = $1 AND oc.seq = $2",
    [raw(address), seq],
  );
  const row = r.rows[0];
  if (row?.data == null)
    throw new HostError("StoreCorrupt", `object ${address}: chunk ${String(seq)} is missing`);
  const data = new Uint8Array(row.data.buffer, row.data.byteOffset, row.data.length);
  return checkObject(formatDigest(new Uint8Array(row.chunk)), data);
}

/**
 * getObjectStream yields an object's bytes chunk by chunk, each checked against its own address;
 * the last chunk is yielded only once the whole has hashed to `address` with the recorded size
 * (`ObjectMismatch` otherwise), so a consumer that reads to the end has verified bytes. Null when
 * the object is not stored. With `expectSize` (a size the caller holds verified, such as a snapshot
 * entry's), an object recorded with another size is refused before any chunk is read, and a stream
 * never runs past the recorded size (`ObjectMismatch`): a chunk list altered to repeat chunks
 * cannot make a reader fetch and write more than the size it expects.
 */
export async function getObjectStream(
  pool: Pool,
  address: Digest,
  expectSize?: bigint,
): Promise<AsyncGenerator<Uint8Array> | null> {
  const info = await objectInfo(pool, address);
  if (info === null) return null;
  if (expectSize !== undefined && BigInt(info.size) !== expectSize)
    throw new SandboxAttestError(
      "ObjectMismatch",
      `object ${address} is recorded with ${String(info.size)} bytes, expected ${String(expectSize)}`,
    );
  return (async function* () {
    const h = createBlake3();
    let size = 0;
    let held: Uint8Array | null = null;
    for (let seq = 0; seq < info.chunks; seq++) {
      const chunk = await readChunk(pool, address, seq);
      if (size + chunk.length > info.size)
        throw new SandboxAttestError(
          "ObjectMismatch",
          `object ${address}: its chunks hold more than its recorded ${String(info.size)} bytes`,
        );
      if (held !== null) yield held;
      h.update(chunk);
      size += chunk.length;
      held = chunk;
    }
    const got = formatDigest(h.digest());
    if (got !== address || size !== info.size)
      throw new SandboxAttestError(
        "ObjectMismatch",
        `object ${address} holds ${String(size)} bytes hashing to ${got}`,
      );
    if (held !== null) yield held;
  })();
}
