// C20: standing grants (jcp §4.6). A valid ledger under a policy signed by the held grant's issuer,
// then ledgers and policies broken one way at a time, each with the code the generator states.
import {
  addressOf,
  chainGenesis,
  payloadOf,
  signPayload,
  type Envelope,
  type Json,
  type JsonObject,
} from "@sbx/wire";
import { EVENT_PAYLOAD_TYPE, MINT_LEDGER_TAG, MINT_PAYLOAD_TYPE } from "@sbx/jcp-grant/standing";
import { errCase, flipBase64Byte, okCase } from "../../generate/build.ts";
import type { ConformanceClass, Vector } from "../../types.ts";
import { standingVerify } from "./ops.ts";
import { ALICE, CAROL, HOUR, MALLORY, ROOT, rootPayload, sign, T0 } from "../grants/fixtures.ts";
import {
  event,
  held,
  ledger,
  policyPayload,
  signedEvent,
  signPolicy,
  SOURCE,
  standingInput,
  type MintSpec,
} from "./fixtures.ts";

const C = "C20" as const;
const MIN = 60_000;

interface Case {
  readonly policy?: Envelope;
  readonly mints: MintSpec[];
  readonly events?: Json[];
  readonly entries?: (es: Envelope[]) => Envelope[];
  readonly held?: Envelope;
}

function input(c: Case): JsonObject {
  const h = c.held ?? held();
  const p = c.policy ?? signPolicy(policyPayload(h));
  const l = ledger(h, p, c.mints);
  const entries = c.entries ? c.entries(l.entries) : l.entries;
  return standingInput(h, p, { entries, children: l.children }, c.events ?? c.mints.map((m) => m.event));
}

const spaced = (n: number): MintSpec[] =>
  Array.from({ length: n }, (_, i) => ({ event: event(i), at_ms: T0 + i * MIN }));

function valid(): Vector[] {
  const ok = (id: string, desc: string, c: Case) => {
    const inp = input(c);
    return okCase(C, `c20-${id}`, desc, "standing.verify", inp, standingVerify(inp) as Json);
  };
  const alert = signedEvent({ type: "alert", source: "pager", at_ms: T0, id: "a1" }, SOURCE);
  return [
    ok("valid", "three children a minute apart: every cap exactly reached", { mints: spaced(3) }),
    ok("empty", "an empty ledger: head₀ = BLAKE3(tag ‖ policy)", { mints: [] }),
    ok("rate-edge", "two mints in one window, the third one window later", {
      mints: [
        { event: event(0), at_ms: T0 },
        { event: event(1), at_ms: T0 + 1 },
        { event: event(2), at_ms: T0 + MIN },
      ],
    }),
    ok("signed-trigger", "an alert signed by the source key the trigger names", {
      mints: [{ event: alert as unknown as Json, at_ms: T0 }],
    }),
  ];
}

function broken(): Vector[] {
  const h = held();
  const no = (id: string, desc: string, c: Case, code: string) =>
    errCase(C, `c20-${id}`, desc, "standing.verify", input(c), code);
  const P = (over: JsonObject, by = ROOT) => signPolicy(policyPayload(h, over), by);
  const resign = (es: Envelope[], i: number, over: JsonObject, by = ALICE) =>
    es.map((e, j) =>
      j === i ? signPayload(MINT_PAYLOAD_TYPE, { ...(payloadOf(e) as JsonObject), ...over }, by) : e,
    );
  const alert = { type: "alert", source: "pager", at_ms: T0, id: "a1" };
  return [
    no(
      "rate",
      "three mints inside one minute under 2 per minute",
      {
        mints: [0, 1, 2].map((i) => ({ event: event(i), at_ms: T0 + i * 1000 })),
      },
      "RateExceeded",
    ),
    no(
      "count-cap",
      "a fourth child under a cap of three",
      { policy: P({ rate: { count: 10, window_ms: MIN } }), mints: spaced(4) },
      "MintCapExceeded",
    ),
    no(
      "budget-cap",
      "children's budgets past max_total_uj",
      { policy: P({ max_total_uj: "150000" }), mints: spaced(2) },
      "MintBudgetExceeded",
    ),
    no(
      "replay",
      "one event mints twice",
      {
        mints: [
          { event: event(0), at_ms: T0 },
          { event: event(0), at_ms: T0 + MIN },
        ],
        events: [event(0)],
      },
      "EventReplayed",
    ),
    no(
      "wrong-type",
      "an event of a type no trigger names",
      { mints: [{ event: event(0, { type: "deploy" }), at_ms: T0 }] },
      "TriggerMismatch",
    ),
    no(
      "wrong-source",
      "an event from a source no trigger names",
      { mints: [{ event: event(0, { source: "gitlab" }), at_ms: T0 }] },
      "TriggerMismatch",
    ),
    no(
      "unsigned-alert",
      "an alert the trigger wants signed, bare",
      { mints: [{ event: alert, at_ms: T0 }] },
      "TriggerMismatch",
    ),
    no(
      "alert-wrong-signer",
      "an alert signed by a key other than the named one",
      { mints: [{ event: signedEvent(alert, MALLORY) as unknown as Json, at_ms: T0 }] },
      "TriggerMismatch",
    ),
    no(
      "policy-by-holder",
      "the holder signs its own minting policy",
      { policy: P({ issuer: ALICE.did }, ALICE), mints: spaced(1) },
      "PolicyNotByIssuer",
    ),
    no(
      "policy-forged",
      "a policy naming the issuer, signed by mallory",
      { policy: P({}, MALLORY), mints: spaced(1) },
      "BadSignature",
    ),
    no(
      "policy-flipped",
      "a policy payload byte flipped",
      {
        policy: (() => {
          const p = P({});
          return { ...p, payload: flipBase64Byte(p.payload, 40) };
        })(),
        mints: [],
      },
      "BadSignature",
    ),
    no(
      "policy-other-grant",
      "a policy for another grant",
      { policy: P({ grant: `blake3:${"0".repeat(64)}` }), mints: [] },
      "BadPolicy",
    ),
    no(
      "policy-zero-cap",
      "a policy with max_children 0",
      { policy: P({ max_children: 0 }), mints: [] },
      "BadPolicy",
    ),
    no(
      "policy-expired",
      "a mint at the policy's expiry",
      { mints: [{ event: event(0), at_ms: T0 + 12 * HOUR }] },
      "Expired",
    ),
    no(
      "policy-not-yet",
      "a mint before the policy's window and the held grant's: the held grant's window is checked first",
      { mints: [{ event: event(0, { at_ms: T0 - 2 * HOUR }), at_ms: T0 - 2 * HOUR }] },
      "NotYetValid",
    ),
    no(
      "policy-not-yet-held-valid",
      "a mint inside the held grant's window but before the policy's: the policy window alone refuses",
      { policy: P({ nbf_ms: T0 + HOUR }), mints: [{ event: event(0), at_ms: T0 }] },
      "NotYetValid",
    ),
    no(
      "policy-oversize",
      "a policy payload over 8192 bytes, signed by mallory: BadPolicy, checked before the signature",
      { policy: P({ pad: "x".repeat(8192) }, MALLORY), mints: [] },
      "BadPolicy",
    ),
    no(
      "bad-event-before-entries",
      "an event without type among the events and a broken first entry: events are opened before any entry",
      {
        mints: spaced(2),
        events: [event(0), event(1), { source: "github", at_ms: T0 }],
        entries: (es) => [{ ...es[0]!, payload: flipBase64Byte(es[0]!.payload, 10) }, es[1]!],
      },
      "BadEvent",
    ),
    no(
      "drop",
      "the middle entry dropped",
      { mints: spaced(3), entries: (es) => [es[0]!, es[2]!] },
      "BrokenMintLedger",
    ),
    no(
      "reorder",
      "two entries swapped",
      { mints: spaced(2), entries: (es) => [es[1]!, es[0]!] },
      "BrokenMintLedger",
    ),
    no(
      "time-backwards",
      "an entry dated before the one above it",
      {
        mints: [
          { event: event(0), at_ms: T0 + MIN },
          { event: event(1), at_ms: T0 },
        ],
      },
      "BrokenMintLedger",
    ),
    no(
      "entry-flipped",
      "an entry payload byte flipped",
      {
        mints: spaced(2),
        entries: (es) => [{ ...es[0]!, payload: flipBase64Byte(es[0]!.payload, 30) }, es[1]!],
      },
      "BadSignature",
    ),
    no(
      "entry-forged",
      "an entry naming alice, signed by mallory",
      { mints: spaced(1), entries: (es) => resign(es, 0, {}, MALLORY) },
      "BadSignature",
    ),
    no(
      "entry-other-minter",
      "an entry by mallory as minter",
      { mints: spaced(1), entries: (es) => resign(es, 0, { minter: MALLORY.did }, MALLORY) },
      "BadMintEntry",
    ),
    no(
      "entry-uj",
      "an entry stating another uj than its child",
      { mints: spaced(1), entries: (es) => resign(es, 0, { uj: "1" }) },
      "BadMintEntry",
    ),
    no(
      "event-missing",
      "an entry citing an event not given",
      { mints: spaced(1), events: [] },
      "BadMintEntry",
    ),
    no(
      "event-after-mint",
      "an event dated after its mint",
      { mints: [{ event: event(0, { at_ms: T0 + 5 }), at_ms: T0 }] },
      "BadMintEntry",
    ),
    no(
      "child-no-citation",
      "a child that does not cite the policy and event",
      {
        mints: [
          {
            event: event(0),
            at_ms: T0,
            child: { mint: { policy: `blake3:${"1".repeat(64)}`, event: `blake3:${"2".repeat(64)}` } },
          },
        ],
      },
      "BadMintEntry",
    ),
    no(
      "child-over-template",
      "a child with more budget than the template",
      { mints: [{ event: event(0), at_ms: T0, child: { budget: { uj: "200000", calls: 10 } } }] },
      "TemplateExceeded",
    ),
    no(
      "child-other-holder",
      "a child to carol, not the template's holder",
      { mints: [{ event: event(0), at_ms: T0, child: { holder: CAROL.did } }] },
      "TemplateExceeded",
    ),
    no(
      "child-too-long",
      "a child living longer than the template's lifetime",
      { mints: [{ event: event(0), at_ms: T0, child: { exp_ms: T0 + 2 * HOUR } }] },
      "TemplateExceeded",
    ),
    no(
      "child-widens-held",
      "a child wider than the held grant",
      { mints: [{ event: event(0), at_ms: T0, child: { scope: { resources: ["/fs/**"] } } }] },
      "ScopeWidens",
    ),
    errCase(
      C,
      "c20-untrusted-root",
      "the held grant's root is not trusted",
      "standing.verify",
      { ...input({ mints: [] }), roots: [MALLORY.did] },
      "UntrustedRoot",
    ),
  ];
}

/**
 * §4.3 "Containment of limits" at the template: under a held grant with unlimited calls, a child
 * that leaves calls out inherits unlimited, which lies inside a template without calls and outside
 * a template with calls; a template never writes null for calls.
 */
function unlimitedCalls(): Vector[] {
  const h = sign(rootPayload({ budget: { uj: "5000000" } }), ROOT);
  const base = policyPayload(h);
  const noCalls = { ...(base.template as JsonObject) };
  delete noCalls.calls;
  const inherits: MintSpec[] = [{ event: event(0), at_ms: T0, child: { budget: { uj: "100000" } } }];
  const ok = input({ held: h, policy: signPolicy({ ...base, template: noCalls }), mints: inherits });
  const tpl = (template: JsonObject, mints: MintSpec[]) =>
    input({ held: h, policy: signPolicy({ ...base, template }), mints });
  return [
    okCase(
      C,
      "c20-unlimited-calls-template-without",
      "unlimited calls inside a template without calls",
      "standing.verify",
      ok,
      standingVerify(ok) as Json,
    ),
    errCase(
      C,
      "c20-unlimited-calls-over-template",
      "a child inheriting unlimited calls is outside a template with calls",
      "standing.verify",
      input({ held: h, mints: inherits }),
      "TemplateExceeded",
    ),
    errCase(
      C,
      "c20-template-null-calls",
      "a template may not write calls: null",
      "standing.verify",
      tpl({ ...noCalls, calls: null }, []),
      "BadPolicy",
    ),
  ];
}

/**
 * jcp §4.6 readings the earlier text left open: the template's form (exactly its members, `calls`
 * the only optional one, `depth` 0–15); the child compared with the template by its effective
 * values (an inherited `nbf_ms` or depth counts); a mint entry at most 4096 payload bytes
 * (`BadMintEntry`, before its signature); a signed event at most 16384 (`OversizeInput`, before
 * its signature); a value with `payloadType` and `signatures` opened as an envelope.
 */
function forms(): Vector[] {
  const h = held();
  const base = policyPayload(h);
  const tpl = base.template as JsonObject;
  const P = (template: JsonObject) => signPolicy({ ...base, template });
  const no = (id: string, desc: string, c: Case, code: string) =>
    errCase(C, `c20-${id}`, desc, "standing.verify", input(c), code);
  const brokenSig = (e: Envelope): Envelope => ({
    ...e,
    signatures: [{ keyid: e.signatures[0]!.keyid, sig: flipBase64Byte(e.signatures[0]!.sig, 5) }],
  });
  const big = (n: number) => signedEvent(event(0, { pad: "x".repeat(n) }), SOURCE) as unknown as Json;
  const p0 = signPolicy(base);
  const emptyOut = {
    policy: addressOf(payloadOf(p0)),
    head: chainGenesis(MINT_LEDGER_TAG, [addressOf(payloadOf(p0))]),
    length: 0,
    total_uj: "0",
    children: [],
  };
  const within = input({ policy: p0, mints: [], events: [big(12_000)] });
  const early = T0 - HOUR;
  const inherits = input({
    policy: p0,
    mints: [{ event: event(0, { at_ms: early }), at_ms: early, omit: ["nbf_ms"] }],
  });
  return [
    no(
      "template-extra-member",
      "a template stating wall_ms: BadPolicy (its members are exactly holder … depth, calls optional)",
      { policy: P({ ...tpl, wall_ms: 5 }), mints: [] },
      "BadPolicy",
    ),
    no(
      "template-depth-16",
      "a template of depth 16: BadPolicy (depth 0–15, as a grant's)",
      { policy: P({ ...tpl, depth: 16 }), mints: [] },
      "BadPolicy",
    ),
    okCase(
      C,
      "c20-child-nbf-inherited",
      "a child minted at the held grant's nbf_ms that leaves nbf_ms out: its effective nbf_ms is at_ms, admitted",
      "standing.verify",
      inherits,
      standingVerify(inherits) as Json,
    ),
    no(
      "child-depth-inherited",
      "a child stating no depth has the held grant's depth less one (3): above the template's 0",
      { mints: [{ event: event(0), at_ms: T0, omit: ["depth"] }] },
      "TemplateExceeded",
    ),
    no(
      "entry-seq-zero",
      "the first entry numbered 0: of the right form (an integer ≥ 0), out of place: BrokenMintLedger",
      {
        mints: spaced(1),
        entries: (es) => [
          signPayload(MINT_PAYLOAD_TYPE, { ...(payloadOf(es[0]!) as JsonObject), seq: 0 }, ALICE),
        ],
      },
      "BrokenMintLedger",
    ),
    no(
      "entry-oversize-bad-signature",
      "an entry over 4096 payload bytes with a broken signature: BadMintEntry, the size before the signature",
      {
        mints: spaced(1),
        entries: (es) => [
          brokenSig(
            signPayload(
              MINT_PAYLOAD_TYPE,
              { ...(payloadOf(es[0]!) as JsonObject), pad: "x".repeat(4200) },
              ALICE,
            ),
          ),
        ],
      },
      "BadMintEntry",
    ),
    okCase(
      C,
      "c20-event-within-limit",
      "a signed event of 12,000 payload bytes, cited by no entry: opened (an event is at most 16384 bytes)",
      "standing.verify",
      within,
      emptyOut,
    ),
    no(
      "event-oversize",
      "a signed event over 16384 payload bytes: OversizeInput, before its signature",
      { policy: p0, mints: [], events: [brokenSig(big(17_000) as unknown as Envelope) as unknown as Json] },
      "OversizeInput",
    ),
    no(
      "event-envelope-malformed",
      "an event with payloadType and signatures is an envelope: a payload not base64 is BadEnvelope, not a bare BadEvent",
      {
        policy: p0,
        mints: [],
        events: [{ payloadType: EVENT_PAYLOAD_TYPE, payload: "!!", signatures: [] }],
      },
      "BadEnvelope",
    ),
  ];
}

export const klass: ConformanceClass = {
  id: C,
  title: "standing grants",
  file: "standing.json",
  ops: { "standing.verify": standingVerify },
  generate: () => [...valid(), ...broken(), ...unlimitedCalls(), ...forms()],
};
