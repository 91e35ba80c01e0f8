// §13.7 The store interface: content-addressed objects, signed objects keyed by payload address,
// and run records read whole and appended one segment at a time by compare-and-append on the head.
// Pure: implementations (a directory, memory, a database) supply the I/O.
import { digestBytes, openEnvelope, type Digest, type Envelope, type Opened } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import type { RunRecord } from "../runrecord/record.ts";
import type { Segment } from "../runrecord/segment.ts";

/** Objects addressed by the BLAKE3 digest of their bytes, and DSSE envelopes by payload address. */
export interface ObjectStore {
  /** Stores bytes durably and returns their address. */
  putObject(bytes: Uint8Array): Promise<Digest>;
  /** Returns the bytes at `address`, checked against it (`ObjectMismatch`), or null when absent. */
  getObject(address: Digest): Promise<Uint8Array | null>;
  hasObject(address: Digest): Promise<boolean>;
  /** Stores a signed object under the address of its payload (§2.4) and returns that address. */
  putSigned(env: Envelope): Promise<Digest>;
  /** Returns the envelope stored under `address`, or null when absent (not verified: see openSigned). */
  getSigned(address: Digest): Promise<unknown>;
}

/** Run records, one per genesis head; appends are compare-and-append on the expected head. */
export interface RecordStore {
  /** Creates the record of `unitId` under `grantsId`; refuses an existing one (`RecordExists`). Returns head₀, the record's id. */
  createRecord(unitId: Digest, grantsId: Digest): Promise<Digest>;
  /** The record's wire bytes (§13.5), or null when there is none. */
  readRecordBytes(id: Digest): Promise<Uint8Array | null>;
  /**
   * Appends `segment` if the record's head is still `expectedHead`, returning the new head. Refuses
   * a moved head (`StaleHead`), a lost race for the same head (`AppendConflict`), a missing record
   * (`RecordMissing`) and every §13.3 refusal (`PhaseViolation`, `SnapshotMismatch`, `RecordClosed`…).
   */
  appendSegment(id: Digest, expectedHead: Digest, segment: Segment): Promise<Digest>;
  /**
   * Optional: the record verified from genesis (§13.4), decoded once, or null when there is none. A
   * store may continue its next append from the state it verified here instead of verifying again.
   * readRun uses it where present, and decodes readRecordBytes otherwise.
   */
  readRecord?(id: Digest): Promise<RunRecord | null>;
}

/** A store holds both. */
export interface Store extends ObjectStore, RecordStore {}

/** checkObject refuses bytes that do not hash to `address` (`ObjectMismatch`). */
export function checkObject(address: Digest, bytes: Uint8Array): Uint8Array {
  const got = digestBytes(bytes);
  if (got !== address)
    throw new SandboxAttestError("ObjectMismatch", `object ${address} holds bytes hashing to ${got}`);
  return bytes;
}

/**
 * openSigned verifies a stored envelope (§2.4 order: shape, type, every signature, canonical payload)
 * and refuses one whose payload address is not `address` (`ObjectMismatch`). Wire codes propagate.
 */
export function openSigned(
  address: Digest,
  env: unknown,
  payloadType: string,
  signers?: readonly string[],
): Opened {
  const opened = openEnvelope(env, signers === undefined ? { payloadType } : { payloadType, signers });
  if (opened.address !== address)
    throw new SandboxAttestError(
      "ObjectMismatch",
      `envelope stored under ${address} has payload ${opened.address}`,
    );
  return opened;
}
