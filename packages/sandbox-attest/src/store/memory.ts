// An in-memory Store (§13.7) with the same semantics as the file-backed one: for tests, browsers,
// and as the executable description of what every store must do.
import { bytesEqual, concatBytes, envelopeAddress, digestBytes, type Digest, type Envelope } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { encodeHeader, encodeSegmentLine } from "../runrecord/wire.ts";
import { RunRecord, runGenesis } from "../runrecord/record.ts";
import type { Segment } from "../runrecord/segment.ts";
import { checkObject, type Store } from "./types.ts";

/** A Store kept in maps; nothing survives the process. */
export class MemoryStore implements Store {
  readonly #objects = new Map<Digest, Uint8Array>();
  readonly #signed = new Map<Digest, Envelope>();
  readonly #records = new Map<Digest, Uint8Array>();
  /** The verified state of each record, so an append continues from its head (§13.7). */
  readonly #state = new Map<Digest, RunRecord>();

  putObject(bytes: Uint8Array): Promise<Digest> {
    const a = digestBytes(bytes);
    this.#objects.set(a, bytes.slice());
    return Promise.resolve(a);
  }
  getObject(address: Digest): Promise<Uint8Array | null> {
    const b = this.#objects.get(address);
    return Promise.resolve(b === undefined ? null : checkObject(address, b.slice()));
  }
  hasObject(address: Digest): Promise<boolean> {
    return Promise.resolve(this.#objects.has(address));
  }
  putSigned(env: Envelope): Promise<Digest> {
    const a = envelopeAddress(env);
    this.#signed.set(a, env);
    return Promise.resolve(a);
  }
  getSigned(address: Digest): Promise<unknown> {
    return Promise.resolve(this.#signed.get(address) ?? null);
  }

  createRecord(unitId: Digest, grantsId: Digest): Promise<Digest> {
    const id = runGenesis(unitId, grantsId);
    if (this.#records.has(id))
      return Promise.reject(new SandboxAttestError("RecordExists", `record ${id} exists`));
    this.#records.set(id, encodeHeader(unitId, grantsId));
    this.#state.set(id, RunRecord.create(unitId, grantsId));
    return Promise.resolve(id);
  }
  readRecordBytes(id: Digest): Promise<Uint8Array | null> {
    return Promise.resolve(this.#records.get(id)?.slice() ?? null);
  }
  appendSegment(id: Digest, expectedHead: Digest, segment: Segment): Promise<Digest> {
    try {
      const bytes = this.#records.get(id);
      const record = this.#state.get(id);
      if (bytes === undefined || record === undefined)
        throw new SandboxAttestError("RecordMissing", `no record ${id}`);
      if (record.head !== expectedHead)
        throw new SandboxAttestError("StaleHead", `head is ${record.head}, expected ${expectedHead}`);
      const n = record.segments.length + 1;
      const head = record.append(segment);
      const line = encodeSegmentLine(n, head, segment);
      this.#records.set(id, concatBytes(bytes, line));
      return Promise.resolve(head);
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
  }

  /** sameObject reports whether an object is held with exactly these bytes (for tests). */
  sameObject(address: Digest, bytes: Uint8Array): boolean {
    const b = this.#objects.get(address);
    return b !== undefined && bytesEqual(b, bytes);
  }
}
