// C21: checkpoints and amendments (jcp §4.7). A valid log whose amendments tighten the grant that
// chain verification then uses, and logs broken one way at a time, each with its stated code.
import {
  payloadOf,
  signPayload,
  type Digest,
  type Envelope,
  type Json,
  type JsonObject,
  type KeyPair,
} from "@sbx/wire";
import { AMENDMENT_PAYLOAD_TYPE, CHECKPOINT_PAYLOAD_TYPE, CheckpointLog } from "@sbx/jcp-grant/checkpoint";
import { errCase, flipBase64Byte, okCase } from "../../generate/build.ts";
import type { ConformanceClass, Vector } from "../../types.ts";
import { checkpointVerify } from "./ops.ts";
import {
  addr,
  ALICE,
  BOB,
  childPayload,
  HOUR,
  MALLORY,
  ROOT,
  rootPayload,
  sign,
  T0,
} from "../grants/fixtures.ts";

const C = "C21" as const;
const STATE = `blake3:${"5".repeat(64)}`;

type Step = ["c", KeyPair, string, number?] | ["a", KeyPair, JsonObject];

/** build appends steps through the library where they are valid and raw where they are not. */
function build(chain: Envelope[], steps: Step[]): Envelope[] {
  const out: Envelope[] = [];
  const log = new CheckpointLog(chain);
  let amendments = 0;
  let last: Digest | null = null;
  steps.forEach((s, i) => {
    const base = {
      grant: log.original.address,
      seq: i + 1,
      prev: log.headAt(i)!,
      at_ms: T0 + i,
      by: s[1].did,
    };
    const env =
      s[0] === "c"
        ? signPayload(
            CHECKPOINT_PAYLOAD_TYPE,
            {
              ...base,
              state: STATE,
              spent: { uj: s[2], calls: 1, wall_ms: 0 },
              amendments: s[3] ?? amendments,
            },
            s[1],
          )
        : signPayload(AMENDMENT_PAYLOAD_TYPE, { ...base, responds_to: last ?? base.prev, set: s[2] }, s[1]);
    if (s[0] === "a") amendments++;
    else last = addr(env);
    out.push(env);
    try {
      log.append(env);
    } catch {
      // a broken step: later heads are computed from the raw chain below
    }
  });
  return out;
}

const R = () => [sign(rootPayload(), ROOT)];
const V = (chain: Envelope[], entries: Envelope[], extra: JsonObject = {}, at = T0): JsonObject => ({
  chain: chain as unknown as Json[],
  roots: [ROOT.did],
  at_ms: at,
  entries: entries as unknown as Json[],
  ...extra,
});

function valid(): Vector[] {
  const ok = (id: string, desc: string, inp: JsonObject) =>
    okCase(C, `c21-${id}`, desc, "checkpoint.verify", inp, checkpointVerify(inp) as Json);
  const chain = R();
  const full = build(chain, [
    ["c", ALICE, "1000"],
    ["a", ROOT, { uj: "3000000" }],
    ["a", ROOT, { actions: ["read"], exp_ms: T0 + HOUR }],
    ["c", ALICE, "2000"],
  ]);
  const child = sign(
    childPayload(chain[0]!, ALICE, BOB, "amended-child", { budget: { uj: "1000000" } }),
    ALICE,
  );
  const onChild = build(
    [chain[0]!, child],
    [
      ["c", BOB, "0"],
      ["a", ALICE, { resources: ["/fs/work/src/**"] }],
    ],
  );
  return [
    ok("valid", "checkpoint, two amendments, checkpoint acknowledging both", V(chain, full)),
    ok("empty", "an empty log: the grant unchanged", V(chain, [])),
    ok(
      "extends-prefix",
      "the log extends its own first two entries",
      V(chain, full, { prefix: { length: 2, head: headAfter(chain, full, 2) } }),
    ),
    ok("amend-child", "alice, the issuer of bob's grant, narrows its scope", V([chain[0]!, child], onChild)),
    ok(
      "child-inside-amended-parent",
      "a child still inside its amended parent",
      V(
        [chain[0]!, child],
        build(chain, [
          ["c", ALICE, "0"],
          ["a", ROOT, { uj: "1000000" }],
        ]),
        { log_of: 0 },
      ),
    ),
    // §4.4 effective grants: "depth not above" is ≤, so an amendment may keep the depth.
    ok(
      "amend-depth-same",
      "an amendment restating the depth (4) while narrowing the budget: not a widening",
      V(
        chain,
        build(chain, [
          ["c", ALICE, "0"],
          ["a", ROOT, { depth: 4, uj: "4000000" }],
        ]),
      ),
    ),
  ];
}

function headAfter(chain: Envelope[], entries: Envelope[], n: number): Digest {
  return CheckpointLog.replay(chain, entries.slice(0, n)).head;
}

function broken(): Vector[] {
  const chain = R();
  const no = (id: string, desc: string, inp: JsonObject, code: string) =>
    errCase(C, `c21-${id}`, desc, "checkpoint.verify", inp, code);
  const one = (set: JsonObject, by = ROOT, spent = "1000") =>
    V(
      chain,
      build(chain, [
        ["c", ALICE, spent],
        ["a", by, set],
      ]),
    );
  const full = build(chain, [
    ["c", ALICE, "1000"],
    ["a", ROOT, { uj: "3000000" }],
    ["c", ALICE, "2000"],
  ]);
  const [e0, e1, e2] = full as [Envelope, Envelope, Envelope];
  const child = sign(childPayload(chain[0]!, ALICE, BOB, "big-child", { budget: { uj: "2000000" } }), ALICE);
  const self = [sign(rootPayload({ holder: ROOT.did }), ROOT)];
  const stale = build(chain, [
    ["c", ALICE, "0"],
    ["c", ALICE, "0"],
    ["a", ROOT, { uj: "1" }],
  ]);
  // §4.7: an entry is a checkpoint or an amendment by its payload type (any other:
  // WrongPayloadType), and at most 8192 payload bytes (BadCheckpoint, BadAmendment by that type).
  const c0 = payloadOf(e0) as JsonObject;
  const big = { ...c0, pad: "x".repeat(8200) };
  return [
    no(
      "entry-other-type",
      "a checkpoint signed under the grant payload type: WrongPayloadType",
      V(chain, [signPayload("application/vnd.jcp.grant+json", c0, ALICE)]),
      "WrongPayloadType",
    ),
    no(
      "entry-oversize-checkpoint",
      "a checkpoint of more than 8192 payload bytes: BadCheckpoint, before its signature",
      V(chain, [signPayload(CHECKPOINT_PAYLOAD_TYPE, big, ALICE)]),
      "BadCheckpoint",
    ),
    no(
      "entry-oversize-amendment",
      "an amendment of more than 8192 payload bytes: BadAmendment, before its signature",
      V(chain, [e0, signPayload(AMENDMENT_PAYLOAD_TYPE, big, ROOT)]),
      "BadAmendment",
    ),
    no("by-holder", "the holder amends its own grant", one({ uj: "1000" }, ALICE), "SeparationOfDuties"),
    no("by-stranger", "mallory amends the grant", one({ uj: "1000" }, MALLORY), "SeparationOfDuties"),
    no(
      "forged-issuer",
      "an amendment naming the issuer, signed by the holder",
      V(chain, [e0, signPayload(AMENDMENT_PAYLOAD_TYPE, payloadOf(e1), ALICE)]),
      "BadSignature",
    ),
    no("widen-budget", "an amendment raising the budget", one({ uj: "5000001" }), "AmendmentWidens"),
    no("widen-calls", "an amendment raising the call limit", one({ calls: 101 }), "AmendmentWidens"),
    no(
      "widen-actions",
      "an amendment adding an action",
      one({ actions: ["exec", "read"] }),
      "AmendmentWidens",
    ),
    no(
      "widen-scope",
      "an amendment widening the resources",
      one({ resources: ["/fs/**"] }),
      "AmendmentWidens",
    ),
    no(
      "widen-expiry",
      "an amendment extending the expiry",
      one({ exp_ms: T0 + 25 * HOUR }),
      "AmendmentWidens",
    ),
    no("widen-depth", "an amendment raising the depth", one({ depth: 5 }), "AmendmentWidens"),
    no(
      "below-spent",
      "a budget below what the checkpoint says is spent",
      one({ uj: "999" }),
      "BudgetBelowSpent",
    ),
    no("empty-set", "an amendment that sets nothing", one({}), "BadAmendment"),
    // §4.7 Amendment: its rules in the order they are written, the first failure reported.
    no(
      "order-separation-before-responds-to",
      "the holder amends before any checkpoint: SeparationOfDuties before responds_to",
      V(chain, build(chain, [["a", ALICE, { uj: "1" }]])),
      "SeparationOfDuties",
    ),
    no(
      "order-responds-to-before-widens",
      "the issuer widens the budget before any checkpoint: responds_to (BadAmendment) before AmendmentWidens",
      V(chain, build(chain, [["a", ROOT, { uj: "5000001" }]])),
      "BadAmendment",
    ),
    no(
      "order-widens-before-below-spent",
      "a wider budget and a call limit below what was spent: AmendmentWidens before BudgetBelowSpent",
      one({ uj: "5000001", calls: 0 }),
      "AmendmentWidens",
    ),
    no(
      "order-empty-window-before-below-spent",
      "an empty window and a budget below what was spent: BadAmendment before BudgetBelowSpent",
      one({ uj: "999", exp_ms: 0 }),
      "BadAmendment",
    ),
    no(
      "no-checkpoint",
      "an amendment before any checkpoint",
      V(chain, build(chain, [["a", ROOT, { uj: "1" }]])),
      "BadAmendment",
    ),
    no(
      "stale-checkpoint",
      "an amendment citing an earlier checkpoint",
      V(
        chain,
        build(chain, [
          ["c", ALICE, "0"],
          ["c", ALICE, "0"],
          ["a", ROOT, { uj: "1" }],
        ]).map((e, i) =>
          i === 2
            ? signPayload(
                AMENDMENT_PAYLOAD_TYPE,
                { ...(payloadOf(e) as JsonObject), responds_to: addr(stale[0]!) },
                ROOT,
              )
            : e,
        ),
      ),
      "BadAmendment",
    ),
    no(
      "unacknowledged",
      "a checkpoint that ignores an amendment",
      V(
        chain,
        build(chain, [
          ["c", ALICE, "0"],
          ["a", ROOT, { uj: "4000000" }],
          ["c", ALICE, "0", 0],
        ]),
      ),
      "UnacknowledgedAmendment",
    ),
    no(
      "checkpoint-by-stranger",
      "a checkpoint signed by mallory",
      V(chain, build(chain, [["c", MALLORY, "0"]])),
      "NotHolder",
    ),
    no(
      "spend-decreases",
      "a checkpoint reporting less spend than the last",
      V(
        chain,
        build(chain, [
          ["c", ALICE, "10"],
          ["c", ALICE, "9"],
        ]),
      ),
      "BadCheckpoint",
    ),
    no(
      "self-issued",
      "a grant whose issuer is its holder, with an empty log: refused when the log is opened",
      V(self, []),
      "NotAmendable",
    ),
    no(
      "self-issued-with-checkpoint",
      "a self-issued grant with a checkpoint whose prev is wrong: NotAmendable before any entry",
      V(self, [
        signPayload(
          CHECKPOINT_PAYLOAD_TYPE,
          {
            grant: addr(self[0]!),
            seq: 1,
            prev: STATE,
            at_ms: T0,
            by: ROOT.did,
            state: STATE,
            spent: { uj: "0", calls: 0, wall_ms: 0 },
            amendments: 0,
          },
          ROOT,
        ),
      ]),
      "NotAmendable",
    ),
    no("gap", "the middle entry dropped", V(chain, [e0, e2]), "BrokenCheckpointLog"),
    no("reorder", "two entries swapped", V(chain, [e1, e0, e2]), "BrokenCheckpointLog"),
    no("duplicate", "an entry repeated", V(chain, [e0, e0]), "BrokenCheckpointLog"),
    no(
      "fork",
      "a log that does not extend the head seen before",
      V(
        chain,
        build(chain, [
          ["c", ALICE, "1000"],
          ["c", ALICE, "1000"],
        ]),
        { prefix: { length: 2, head: headAfter(chain, full, 2) } },
      ),
      "BrokenCheckpointLog",
    ),
    no(
      "flipped",
      "an amendment payload byte flipped",
      V(chain, [e0, { ...e1, payload: flipBase64Byte(e1.payload, 30) }]),
      "BadSignature",
    ),
    no(
      "expired-by-amendment",
      "a chain verified after an amended, earlier expiry",
      V(
        chain,
        build(chain, [
          ["c", ALICE, "0"],
          ["a", ROOT, { exp_ms: T0 + HOUR }],
        ]),
        {},
        T0 + 2 * HOUR,
      ),
      "Expired",
    ),
    no(
      "child-outside-amended",
      "a child no longer inside its tightened parent",
      V(
        [chain[0]!, child],
        build(chain, [
          ["c", ALICE, "0"],
          ["a", ROOT, { uj: "1000000" }],
        ]),
        { log_of: 0 },
      ),
      "BudgetExceeds",
    ),
  ];
}

/**
 * §4.3 "Containment of limits" under amendment: a limit the root leaves unlimited may be tightened
 * to a finite one, a child that leaves it out then inherits the amended limit (not unlimited), and
 * no amendment writes null to lift a limit.
 */
function limits(): Vector[] {
  const chain = R();
  const amendWall = build(chain, [
    ["c", ALICE, "0"],
    ["a", ROOT, { wall_ms: 5000 }],
  ]);
  const child = sign(
    childPayload(chain[0]!, ALICE, BOB, "inherits-limit", { budget: { uj: "1000" } }),
    ALICE,
  );
  const ok = (id: string, desc: string, inp: JsonObject) =>
    okCase(C, `c21-${id}`, desc, "checkpoint.verify", inp, checkpointVerify(inp) as Json);
  const no = (id: string, set: JsonObject, desc: string) =>
    errCase(
      C,
      `c21-${id}`,
      desc,
      "checkpoint.verify",
      V(
        chain,
        build(chain, [
          ["c", ALICE, "0"],
          ["a", ROOT, set],
        ]),
      ),
      "BadAmendment",
    );
  return [
    ok("limit-unlimited-wall", "an unlimited wall_ms amended to 5000", V(chain, amendWall)),
    ok(
      "child-inherits-amended-limit",
      "a child leaving wall_ms out inherits the amended 5000",
      V([chain[0]!, child], amendWall, { log_of: 0 }),
    ),
    no("null-calls", { calls: null }, "an amendment may not write calls: null to lift the limit"),
    no("null-wall", { wall_ms: null }, "an amendment may not write wall_ms: null to lift the limit"),
  ];
}

export const klass: ConformanceClass = {
  id: C,
  title: "checkpoints and amendments",
  file: "standing.json",
  ops: { "checkpoint.verify": checkpointVerify },
  generate: () => [...valid(), ...broken(), ...limits()],
};
