// §2.7 Hash chains: head₀ = BLAKE3(tag ‖ bound ids), headₙ = BLAKE3(headₙ₋₁ ‖ JCS(entryₙ)).
// The tag is its UTF-8 bytes; each bound id and each head enters as its 32 raw bytes.
import { blake3 } from "./blake3.ts";
import { concatBytes, utf8 } from "./bytes.ts";
import { formatDigest, parseDigest, type Digest } from "./digest.ts";
import { canonicalBytes } from "./json.ts";

/** chainGenesis returns head₀ of a chain tagged `tag` that binds the ids given, in order (§2.7). */
export function chainGenesis(tag: string, ids: readonly Digest[]): Digest {
  return formatDigest(blake3(concatBytes(utf8(tag), ...ids.map(parseDigest))));
}

/** chainNext returns headₙ from headₙ₋₁ and entryₙ (§2.7). */
export function chainNext(head: Digest, entry: unknown): Digest {
  return formatDigest(blake3(concatBytes(parseDigest(head), canonicalBytes(entry))));
}

/** chainNextBytes is chainNext for an entry already in canonical bytes. */
export function chainNextBytes(head: Digest, entryBytes: Uint8Array): Digest {
  return formatDigest(blake3(concatBytes(parseDigest(head), entryBytes)));
}

/** chainHeads returns every head of a chain: [head₀, head₁, …, headₙ]. */
export function chainHeads(tag: string, ids: readonly Digest[], entries: readonly unknown[]): Digest[] {
  const heads = [chainGenesis(tag, ids)];
  for (const e of entries) heads.push(chainNext(heads[heads.length - 1]!, e));
  return heads;
}
