// §8.3–§8.4 The journal of one active interval: events in order, their Merkle root over JCS bytes
// (BLAKE3, RFC 9162 shape) bound with the event count as a tree head, and proofs for one event.
import { canonicalBytes, formatDigest, type Json, type JsonObject } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { blake3Hasher, formatTreeHead, MerkleTree, type TreeHeadJson } from "../merkle/index.ts";
import { parseEvent, type JournalEvent, type StdioChunk, type StdioStream } from "./events.ts";

/** What a caller appends: an event without `seq` (and, for stdio, without `chunk`); the journal numbers it. */
export type EventInput = {
  [T in JournalEvent as T["type"]]: T extends StdioChunk ? Omit<T, "seq" | "chunk"> : Omit<T, "seq">;
}[JournalEvent["type"]];

/** An inclusion proof for one event (§8.4): its index and the RFC 9162 audit path, nearest first. */
export interface EventProof {
  readonly index: number;
  readonly path: readonly string[];
}

/** eventLeaf returns the leaf hash of an event: BLAKE3(0x00 ‖ JCS(event)) (§8.3). */
export function eventLeaf(event: JournalEvent): Uint8Array {
  return blake3Hasher.leaf(canonicalBytes(event));
}

/**
 * Journal appends events in order and keeps their tree (§8.3). Each append is validated as
 * parseEvent would; a refused input throws its code and leaves the journal unchanged. Events are
 * hashed into the tree when a head or a proof is first asked for, not as they come, so a busy
 * producer (the exec gate journals every exec while the sandbox runs) does no hashing meanwhile.
 */
export class Journal {
  readonly #events: JournalEvent[] = [];
  readonly #tree = new MerkleTree(blake3Hasher);
  readonly #chunks: Record<StdioStream, number> = { stdin: 0, stdout: 0, stderr: 0 };

  /**
   * from checks a whole event list (§8.2–§8.3) and returns its journal. Refuses any event
   * parseEvent refuses, and EventOutOfOrder when an event's `seq` is not its position or a
   * stream's chunks are not numbered 0, 1, 2, … in order.
   */
  static from(events: readonly Json[]): Journal {
    const j = new Journal();
    for (const raw of events) j.#add(parseEvent(raw));
    return j;
  }

  /**
   * append numbers `input`, checks it (§8.2) and adds it; returns the event as journaled. `input`
   * may also be a plain JSON object in event form without `seq`, such as execpolicy's
   * execDecisionEvent; it is checked the same way.
   */
  append(input: EventInput | JsonObject): JournalEvent {
    const seq = this.#events.length;
    const o = input as Record<string, unknown>;
    const raw =
      o.type === "stdio.chunk" ? { ...o, seq, chunk: this.#chunks[o.stream as StdioStream] } : { ...o, seq };
    return this.#add(parseEvent(raw));
  }

  #add(e: JournalEvent): JournalEvent {
    const at = this.#events.length;
    if (e.seq !== at)
      throw new SandboxAttestError("EventOutOfOrder", `event at position ${at} has seq ${e.seq}`);
    if (e.type === "stdio.chunk" && e.chunk !== this.#chunks[e.stream])
      throw new SandboxAttestError(
        "EventOutOfOrder",
        `${e.stream} chunk ${e.chunk} where ${this.#chunks[e.stream]} is next`,
      );
    const event = Object.freeze(e);
    this.#events.push(event);
    if (event.type === "stdio.chunk") this.#chunks[event.stream]++;
    return event;
  }

  /** size is the number of events. */
  get size(): number {
    return this.#events.length;
  }

  /** events is every event so far, in order. */
  get events(): readonly JournalEvent[] {
    return this.#events;
  }

  /** head returns the tree head {size, root} over the first `size` events (default: all). */
  head(size: number = this.#events.length): TreeHeadJson {
    return formatTreeHead({ size, root: this.#hashedTree().root(size) });
  }

  /** prove returns the inclusion proof of event `index` in the journal of `size` events (default: all). */
  prove(index: number, size: number = this.#events.length): EventProof {
    return { index, path: this.#hashedTree().inclusionProof(index, size).map(formatDigest) };
  }

  /** proveConsistency returns the RFC 9162 consistency proof from the first `size1` events to all of them. */
  proveConsistency(size1: number): string[] {
    return this.#hashedTree().consistencyProof(size1).map(formatDigest);
  }

  /** The tree with every event so far hashed into it (its size is the number hashed). */
  #hashedTree(): MerkleTree<Uint8Array> {
    for (let i = this.#tree.size; i < this.#events.length; i++)
      this.#tree.append(eventLeaf(this.#events[i] as JournalEvent));
    return this.#tree;
  }
}
