// §6.4 Receipt chains: the receipts of one run (one unit under one grant set) form a hash chain,
// head₀ = BLAKE3("sandbox.energy/1" ‖ unit_id ‖ grants_id), headₙ = BLAKE3(headₙ₋₁ ‖ JCS(receiptₙ)).
// Each receipt states its position (`seq`) and the head before it (`prev`), so a verifier holding
// any run of receipts detects a gap, a reordering and a splice from another run or fork.
import {
  chainGenesis,
  chainNext,
  chainNextBytes,
  formatAmount,
  parseAmount,
  type Amount,
  type Digest,
  type Envelope,
  type KeyPair,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { buildReceipt, openReceipt, signReceipt } from "./receipt.ts";
import { ENERGY_CHAIN_TAG, type EnergyComponent, type EnergyReceipt, type MeterReading } from "./types.ts";

/** Where a receipt chain stands: its run, the next seq, the current head and the last interval's end. */
export interface EnergyChainState {
  readonly unit_id: Digest;
  readonly grants_id: Digest;
  readonly seq: number;
  readonly head: Digest;
  readonly last_end_ms: number | null;
}

/** energyGenesis returns head₀ of a run's receipt chain (§6.4). Refuses ids that are not digests (wire `BadDigest`). */
export function energyGenesis(unitId: Digest, grantsId: Digest): Digest {
  return chainGenesis(ENERGY_CHAIN_TAG, [unitId, grantsId]);
}

/** startEnergyChain returns the state of an empty receipt chain for a run (§6.4). */
export function startEnergyChain(unitId: Digest, grantsId: Digest): EnergyChainState {
  return {
    unit_id: unitId,
    grants_id: grantsId,
    seq: 0,
    head: energyGenesis(unitId, grantsId),
    last_end_ms: null,
  };
}

/** advance returns the state after `r`, which must already be the chain's next receipt. */
function advance(s: EnergyChainState, r: EnergyReceipt, bytes?: Uint8Array): EnergyChainState {
  const head = bytes ? chainNextBytes(s.head, bytes) : chainNext(s.head, r);
  return { ...s, seq: s.seq + 1, head, last_end_ms: r.end_ms };
}

/** What makeReceipt returns: the signed receipt, its payload and address, and the chain's next state. */
export interface MadeReceipt {
  readonly envelope: Envelope;
  readonly receipt: EnergyReceipt;
  readonly state: EnergyChainState;
}

/**
 * makeReceipt turns a meter reading (plus any extra components, e.g. `warmpool` or `idle`) into the
 * run's next receipt, signs it with the host key and advances the chain (§6.1, §6.4). Refuses an
 * interval starting before the previous receipt's end (`EnergyIntervalOverlap`) and whatever
 * buildReceipt refuses.
 */
export function makeReceipt(
  state: EnergyChainState,
  reading: MeterReading,
  host: KeyPair,
  extra: readonly EnergyComponent[] = [],
): MadeReceipt {
  if (state.last_end_ms !== null && reading.start_ms < state.last_end_ms)
    throw new SandboxAttestError(
      "EnergyIntervalOverlap",
      `start ${reading.start_ms} before ${state.last_end_ms}`,
    );
  const receipt = buildReceipt({
    unit_id: state.unit_id,
    grants_id: state.grants_id,
    seq: state.seq,
    prev: state.head,
    host: host.did,
    start_ms: reading.start_ms,
    end_ms: reading.end_ms,
    components: [...reading.components, ...extra],
    absent: reading.absent,
  });
  return { envelope: signReceipt(receipt, host), receipt, state: advance(state, receipt) };
}

/** Options of verifyEnergyChain. */
export interface ChainOptions {
  readonly unit_id: Digest;
  readonly grants_id: Digest;
  /** When given, every receipt must be signed by one of these did:keys (`UnknownSigner`). */
  readonly hosts?: readonly string[];
  /** When given, the chain must end at this head (`EnergyChainHeadMismatch`): it detects truncation. */
  readonly head?: Digest;
  /** Continue from this state instead of genesis (receipts already verified up to it). */
  readonly from?: EnergyChainState;
}

/** What a verified chain yields: the receipts, their addresses, the final state and the total energy. */
export interface VerifiedChain {
  readonly receipts: readonly EnergyReceipt[];
  readonly addresses: readonly Digest[];
  readonly state: EnergyChainState;
  readonly total_uj: Amount;
}

function checkPosition(s: EnergyChainState, r: EnergyReceipt, later: () => readonly EnergyReceipt[]): void {
  if (r.unit_id !== s.unit_id || r.grants_id !== s.grants_id)
    throw new SandboxAttestError("EnergyChainSplice", `receipt ${r.seq} belongs to another run`);
  if (r.seq < s.seq) throw new SandboxAttestError("EnergyChainReorder", `seq ${r.seq} after ${s.seq - 1}`);
  if (r.seq > s.seq) {
    // The missing receipt appearing later is a reordering; never appearing is a gap.
    if (later().some((x) => x.seq === s.seq))
      throw new SandboxAttestError("EnergyChainReorder", `seq ${r.seq} before ${s.seq}`);
    throw new SandboxAttestError("EnergyChainGap", `seq ${r.seq}, want ${s.seq}`);
  }
  if (r.prev !== s.head)
    throw new SandboxAttestError("EnergyChainSplice", `receipt ${r.seq} does not continue the chain`);
  if (s.last_end_ms !== null && r.start_ms < s.last_end_ms)
    throw new SandboxAttestError("EnergyIntervalOverlap", `receipt ${r.seq} starts before ${s.last_end_ms}`);
}

/**
 * verifyEnergyChain verifies the receipts of one run in order (§6.4): each receipt as openReceipt
 * does; then its run (`EnergyChainSplice` for another unit or grant set), its position
 * (`EnergyChainGap` when one is missing, `EnergyChainReorder` when out of order or repeated), its
 * `prev` against the running head (`EnergyChainSplice`), its interval against the previous one
 * (`EnergyIntervalOverlap`), and, when `head` is given, the final head (`EnergyChainHeadMismatch`).
 */
export function verifyEnergyChain(envelopes: readonly unknown[], o: ChainOptions): VerifiedChain {
  const opened = envelopes.map((e) => openReceipt(e, o.hosts ? { hosts: o.hosts } : {}));
  const receipts = opened.map((x) => x.receipt);
  let s = o.from ?? startEnergyChain(o.unit_id, o.grants_id);
  if (s.unit_id !== o.unit_id || s.grants_id !== o.grants_id)
    throw new RangeError("verifyEnergyChain: `from` is the state of another run");
  let total = 0n;
  receipts.forEach((r, i) => {
    checkPosition(s, r, () => receipts.slice(i + 1));
    s = advance(s, r, opened[i]?.bytes);
    total += parseAmount(r.total_uj);
  });
  if (o.head !== undefined && o.head !== s.head)
    throw new SandboxAttestError("EnergyChainHeadMismatch", `chain ends at ${s.head}, want ${o.head}`);
  return { receipts, addresses: opened.map((x) => x.address), state: s, total_uj: formatAmount(total) };
}
