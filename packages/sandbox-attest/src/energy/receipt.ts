// §6.1 Energy receipts: one interval of one unit's run, its components by domain, their exact sum,
// signed by the host in a DSSE envelope. §6.4 places each receipt in its run's chain by `seq` and `prev`.
import {
  formatAmount,
  isDidKey,
  isDigest,
  openEnvelope,
  parseAmount,
  signPayload,
  type Digest,
  type Envelope,
  type KeyPair,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { assertComponent } from "./component.ts";
import { ENERGY_RECEIPT_TYPE, type EnergyReceipt } from "./types.ts";

const RECEIPT_KEYS = [
  "absent",
  "components",
  "end_ms",
  "grants_id",
  "host",
  "prev",
  "seq",
  "start_ms",
  "total_uj",
  "unit_id",
].join(",");
const MAX_COMPONENTS = 256;
const MAX_ABSENT = 32;

function bad(message: string): SandboxAttestError {
  return new SandboxAttestError("BadEnergyReceipt", message);
}

function checkIds(r: Record<string, unknown>): void {
  for (const k of ["unit_id", "grants_id", "prev"]) if (!isDigest(r[k])) throw bad(`${k} is not a digest`);
  if (typeof r.host !== "string" || !isDidKey(r.host)) throw bad("host is not a did:key");
  if (typeof r.seq !== "number" || !Number.isSafeInteger(r.seq) || r.seq < 0)
    throw bad("seq is not a non-negative integer");
}

function checkInterval(r: Record<string, unknown>): void {
  const { start_ms: s, end_ms: e } = r;
  if (typeof s !== "number" || !Number.isSafeInteger(s) || s < 0) throw bad("start_ms is not a time");
  if (typeof e !== "number" || !Number.isSafeInteger(e) || e < 0) throw bad("end_ms is not a time");
  if (e < s) throw new SandboxAttestError("EnergyBadInterval", `end_ms ${e} before start_ms ${s}`);
}

/** checkAbsent refuses an `absent` list that is not sorted, unique, non-empty strings (`BadEnergyReceipt`). */
function checkAbsent(a: unknown): void {
  if (!Array.isArray(a) || a.length > MAX_ABSENT) throw bad(`absent is not a list of at most ${MAX_ABSENT}`);
  for (let i = 0; i < a.length; i++) {
    const s: unknown = a[i];
    if (typeof s !== "string" || s.length === 0 || s.length > 64)
      throw bad(`absent[${i}] is not a source name`);
    if (i > 0 && !((a[i - 1] as string) < s)) throw bad("absent is not sorted and unique");
  }
}

function checkComponents(cs: unknown, total: unknown): void {
  if (!Array.isArray(cs) || cs.length > MAX_COMPONENTS)
    throw bad(`components is not a list of at most ${MAX_COMPONENTS}`);
  let sum = 0n;
  for (const c of cs as unknown[]) {
    assertComponent(c);
    sum += parseAmount(c.uj);
  }
  const t = parseAmount(total);
  if (t !== sum)
    throw new SandboxAttestError("EnergyTotalMismatch", `total_uj ${t}, components sum to ${sum}`);
}

/**
 * assertReceipt checks an energy receipt payload (§6.1): exactly its ten members (`BadEnergyReceipt`),
 * ids as digests, host as did:key, seq and times as integers (`BadEnergyReceipt`), end_ms not before
 * start_ms (`EnergyBadInterval`), every component per §6.2 (see assertComponent), absent sorted
 * and unique, and total_uj equal to the exact sum of the components (`EnergyTotalMismatch`).
 */
export function assertReceipt(v: unknown): asserts v is EnergyReceipt {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw bad("receipt is not an object");
  const r = v as Record<string, unknown>;
  const keys = Object.keys(r).sort().join(",");
  if (keys !== RECEIPT_KEYS) throw bad(`receipt members are ${keys}, want ${RECEIPT_KEYS}`);
  checkIds(r);
  checkInterval(r);
  checkAbsent(r.absent);
  checkComponents(r.components, r.total_uj);
}

/** What buildReceipt takes: the receipt but the total, which it computes; `absent` may be left out. */
export type ReceiptFields = Omit<EnergyReceipt, "total_uj" | "absent"> & {
  readonly absent?: readonly string[];
};

/**
 * buildReceipt makes a receipt payload with total_uj the exact sum of its components and `absent`
 * sorted and deduplicated (§6.1). Refuses what assertReceipt refuses.
 */
export function buildReceipt(f: ReceiptFields): EnergyReceipt {
  let sum = 0n;
  for (const c of f.components) sum += parseAmount(c.uj);
  const receipt: EnergyReceipt = {
    unit_id: f.unit_id,
    grants_id: f.grants_id,
    seq: f.seq,
    prev: f.prev,
    host: f.host,
    start_ms: f.start_ms,
    end_ms: f.end_ms,
    components: f.components.map((c) => ({ ...c })),
    total_uj: formatAmount(sum),
    absent: [...new Set(f.absent ?? [])].sort(),
  };
  assertReceipt(receipt);
  return receipt;
}

/**
 * signReceipt signs a receipt as ENERGY_RECEIPT_TYPE with the host's key (§6.1). Refuses a receipt
 * assertReceipt refuses; a key whose did:key is not the receipt's `host` is a RangeError.
 */
export function signReceipt(receipt: EnergyReceipt, key: KeyPair): Envelope {
  assertReceipt(receipt);
  if (receipt.host !== key.did)
    throw new RangeError(`signReceipt: key ${key.did} is not host ${receipt.host}`);
  return signPayload(ENERGY_RECEIPT_TYPE, receipt, key);
}

/** An opened receipt: its payload, its address (the digest of its payload bytes) and its signer. */
export interface OpenedReceipt {
  readonly receipt: EnergyReceipt;
  readonly address: Digest;
  /** The payload's bytes: canonical, so they are JCS(receipt) (§6.4 hashes them into the chain). */
  readonly bytes: Uint8Array;
}

/**
 * openReceipt verifies one signed receipt (§6.1): the envelope and its signatures, and canonical
 * form (wire codes `BadEnvelope`, `WrongPayloadType`, `BadSignature`, `UnknownSigner` when `hosts`
 * is given and no signer is among them, `NotCanonical`), the payload per assertReceipt, and that
 * the receipt's `host` is one of its signers (`ReceiptNotByHost`).
 */
export function openReceipt(env: unknown, opts: { readonly hosts?: readonly string[] } = {}): OpenedReceipt {
  const opened = openEnvelope(env, {
    payloadType: ENERGY_RECEIPT_TYPE,
    ...(opts.hosts ? { signers: opts.hosts } : {}),
  });
  const receipt: unknown = opened.payload;
  assertReceipt(receipt);
  if (!opened.signers.includes(receipt.host))
    throw new SandboxAttestError(
      "ReceiptNotByHost",
      `receipt names host ${receipt.host}, signed by ${opened.signers.join(", ")}`,
    );
  return { receipt, address: opened.address, bytes: opened.bytes };
}
