// Deterministic standing-grant material for C20 and C21: the held grant, policies, events, children
// signed raw (so broken ones can be stated), and mint ledgers chained by hand.
import {
  addressOf,
  chainGenesis,
  chainNext,
  payloadOf,
  signPayload,
  type Digest,
  type Envelope,
  type Json,
  type JsonObject,
  type KeyPair,
} from "@sbx/wire";
import {
  EVENT_PAYLOAD_TYPE,
  MINT_LEDGER_TAG,
  MINT_PAYLOAD_TYPE,
  POLICY_PAYLOAD_TYPE,
} from "@sbx/jcp-grant/standing";
import { key } from "../../generate/keys.ts";
import { addr, ALICE, BOB, childPayload, HOUR, ROOT, rootPayload, sign, T0 } from "../grants/fixtures.ts";

export const SOURCE = key("event-source");

/** The held grant: the C11–C19 root (root-issuer → alice). */
export function held(): Envelope {
  return sign(rootPayload(), ROOT);
}

/** The policy payload of most vectors: children to bob, 100 mJ each, 3 in all, 2 per minute. */
export function policyPayload(h: Envelope, over: JsonObject = {}): JsonObject {
  return {
    grant: addr(h),
    issuer: ROOT.did,
    minter: ALICE.did,
    triggers: [
      { type: "ci.push", source: "github" },
      { type: "alert", source: "pager", signed_by: SOURCE.did },
    ],
    template: {
      holder: BOB.did,
      resources: ["/fs/work/build/**"],
      actions: ["read", "write"],
      uj: "100000",
      calls: 10,
      lifetime_ms: HOUR,
      depth: 0,
    },
    max_children: 3,
    max_total_uj: "300000",
    rate: { count: 2, window_ms: 60_000 },
    nbf_ms: T0 - HOUR,
    exp_ms: T0 + 12 * HOUR,
    ...over,
  };
}

/** signPolicy signs a policy payload, valid or not. */
export function signPolicy(p: JsonObject, by: KeyPair = ROOT): Envelope {
  return signPayload(POLICY_PAYLOAD_TYPE, p, by);
}

/** event returns a ci.push event numbered `n` at T0 (bare). */
export function event(n: number, over: JsonObject = {}): JsonObject {
  return { type: "ci.push", source: "github", at_ms: T0, id: `push-${n}`, ...over };
}

/** signedEvent signs an event as `by`. */
export function signedEvent(e: JsonObject, by: KeyPair): Envelope {
  return signPayload(EVENT_PAYLOAD_TYPE, e, by);
}

/** One mint as a vector states it: the event, the time, and any child or entry fields overridden. */
export interface MintSpec {
  readonly event: Json;
  readonly at_ms: number;
  readonly child?: JsonObject;
  readonly entry?: JsonObject;
  readonly signer?: KeyPair;
  /** Child members to leave out, so the child inherits them from the held grant (§4.1). */
  readonly omit?: readonly string[];
}

function eventAddr(e: Json): Digest {
  const o = e as JsonObject;
  return typeof o.payloadType === "string" ? addressOf(payloadOf(o as unknown as Envelope)) : addressOf(e);
}

/** ledger signs children and entries for `mints` under `policy` without any check. */
export function ledger(h: Envelope, policy: Envelope, mints: readonly MintSpec[]) {
  const pAddr = addressOf(payloadOf(policy));
  let head = chainGenesis(MINT_LEDGER_TAG, [pAddr]);
  const entries: Envelope[] = [];
  const children: Envelope[] = [];
  mints.forEach((m, i) => {
    const ev = eventAddr(m.event);
    const stated = childPayload(h, ALICE, BOB, `mint-${i}`, {
      scope: { resources: ["/fs/work/build/**"] },
      budget: { uj: "100000", calls: 10 },
      nbf_ms: m.at_ms,
      exp_ms: m.at_ms + HOUR,
      depth: 0,
      mint: { policy: pAddr, event: ev },
      ...m.child,
    });
    const omit = new Set(m.omit ?? []);
    const child = sign(Object.fromEntries(Object.entries(stated).filter(([k]) => !omit.has(k))), ALICE);
    const cp = payloadOf(child) as { budget?: { uj?: string } };
    const entry = {
      policy: pAddr,
      seq: i + 1,
      prev: head,
      event: ev,
      child: addr(child),
      uj: cp.budget?.uj ?? "5000000",
      at_ms: m.at_ms,
      minter: ALICE.did,
      ...m.entry,
    };
    head = chainNext(head, entry);
    entries.push(signPayload(MINT_PAYLOAD_TYPE, entry, m.signer ?? ALICE));
    children.push(child);
  });
  return { entries, children, head };
}

/** standingInput is the input of standing.verify. */
export function standingInput(
  h: Envelope,
  policy: Envelope,
  l: { entries: Envelope[]; children: Envelope[] },
  events: readonly Json[],
): JsonObject {
  return {
    policy: policy as unknown as Json,
    held: [h as unknown as Json],
    roots: [ROOT.did],
    entries: l.entries as unknown as Json[],
    events: [...events],
    children: l.children as unknown as Json[],
  };
}
