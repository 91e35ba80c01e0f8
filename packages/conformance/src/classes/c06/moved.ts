// C6 vectors of the hand-off (sandbox-attest §13.2a): a record ending in a signed `moved` segment
// verifies, anything appended after it is `RunMoved`, and a forged, altered, transplanted or
// malformed hand-off is refused. The hand-off is signed here from the spec's text (PAE over the
// segment's JCS without `sig`, Ed25519 by the test key "host"), not by the implementation's signer;
// every expected code is stated from the rule the case breaks.
import { canonicalBytes, pae, signBytes, toBase64, type Digest, type Json, type KeyPair } from "@sbx/wire";
import { RunRecord, type Segment } from "@sbx/sandbox-attest/runrecord";
import { errCase, okCase } from "../../generate/build.ts";
import { key } from "../../generate/keys.ts";
import type { Vector } from "../../types.ts";
import {
  C,
  close,
  exec,
  forge,
  GRANTS,
  idleSum,
  resume,
  SNAP,
  suspend,
  T,
  UNIT,
  verify,
  wire,
} from "./cases.ts";

const TYPE = "application/vnd.sandbox.runrecord.moved+json";
const TO = "postgres://store-b.example/sbx";

type Moved = Record<string, Json>;

/** handoff signs `{at_ms, head, kind, signer, to}` as §13.2a says, with `by` (default: the signer). */
function handoff(head: Digest, at: number, signer: KeyPair, to = TO, by = signer): Moved {
  const m = { kind: "moved", at_ms: T + at, head, to, signer: signer.did };
  return { ...m, sig: toBase64(signBytes(by, pae(TYPE, canonicalBytes(m)))) };
}

const headOf = (segs: readonly Segment[]): Digest => RunRecord.fromSegments(UNIT, GRANTS, segs).head;
const PARKED = [exec(1), suspend(10)];
const HOST = key("host");

function validMoved(): Vector[] {
  const mv = handoff(headOf(PARKED), 20, HOST);
  const segs = [...PARKED, mv as unknown as Segment];
  const r = RunRecord.fromSegments(UNIT, GRANTS, segs);
  return [
    okCase(
      C,
      "c6-moved-valid",
      "execute → suspend → moved: a record ending in a signed hand-off verifies, phase moved",
      "runrecord.verify",
      { record: wire(segs) },
      {
        genesis: r.genesis,
        head: r.head,
        heads: [...r.heads],
        phase: "moved",
        segments: 3,
        idle_uj: idleSum(segs),
      },
    ),
    okCase(
      C,
      "c6-moved-append",
      "a parked run is handed off by appending its signed moved segment",
      "runrecord.append",
      { record: wire(PARKED), segment: mv },
      { head: r.head, record: wire(segs) },
    ),
    okCase(
      C,
      "c6-moved-after-two-parks",
      "a run parked a second time is handed off at its second suspension's head",
      "runrecord.verify",
      {
        record: wire([
          ...PARKED,
          resume(20, "5"),
          exec(2),
          suspend(30),
          handoff(headOf([...PARKED, resume(20, "5"), exec(2), suspend(30)]), 40, HOST) as unknown as Segment,
        ]),
      },
      (() => {
        const s = [...PARKED, resume(20, "5"), exec(2), suspend(30)];
        const all = [...s, handoff(headOf(s), 40, HOST) as unknown as Segment];
        const rr = RunRecord.fromSegments(UNIT, GRANTS, all);
        return {
          genesis: rr.genesis,
          head: rr.head,
          heads: [...rr.heads],
          phase: "moved",
          segments: 6,
          idle_uj: "5",
        };
      })(),
    ),
  ];
}

function afterMoved(): Vector[] {
  const segs = [...PARKED, handoff(headOf(PARKED), 20, HOST) as unknown as Segment];
  const moved = wire(segs);
  const app = (cid: string, desc: string, seg: Segment | Moved): Vector =>
    errCase(C, cid, desc, "runrecord.append", { record: moved, segment: seg as unknown as Json }, "RunMoved");
  const again = handoff(headOf(segs), 30, HOST, "elsewhere");
  return [
    app("c6-moved-then-resume", "a resume appended after the hand-off", resume(30, "1")),
    app("c6-moved-then-close", "a close appended after the hand-off", close(30, "abandoned")),
    app("c6-moved-then-exec", "an execution appended after the hand-off", exec(2)),
    app("c6-moved-then-moved", "a second hand-off (to elsewhere), itself well signed", again),
    verify(
      "c6-moved-wire-then-resume",
      "a record continued after its hand-off, heads consistent",
      forge([...segs, resume(30, "1")]),
      "RunMoved",
    ),
    errCase(
      C,
      "c6-moved-resume",
      "every other precondition holds, but the run was handed off",
      "runrecord.resume",
      {
        record: moved,
        offered: SNAP as unknown as Json,
        environment_satisfies: true,
        at_ms: T + 30,
        idle: { uj: "1", provenance: "measured", source: "rapl:package-0" },
      },
      "RunMoved",
    ),
    errCase(
      C,
      "c6-moved-after-close",
      "a hand-off after close: rule 1 first",
      "runrecord.append",
      {
        record: wire([...PARKED, close(20, "abandoned")]),
        segment: handoff(headOf([...PARKED, close(20, "abandoned")]), 30, HOST),
      },
      "RecordClosed",
    ),
  ];
}

function forgedMoved(): Vector[] {
  const head = headOf(PARKED);
  const good = handoff(head, 20, HOST);
  const app = (cid: string, desc: string, seg: Moved, code: string, segs = PARKED): Vector =>
    errCase(C, cid, desc, "runrecord.append", { record: wire(segs), segment: seg }, code);
  const otherHead = headOf([exec(1), suspend(11)]);
  return [
    app(
      "c6-moved-forged-signer",
      "signed by another key than the signer it names",
      handoff(head, 20, HOST, TO, key("mallory")),
      "BadHandoff",
    ),
    app("c6-moved-altered-to", "`to` changed after signing", { ...good, to: "somewhere else" }, "BadHandoff"),
    app("c6-moved-altered-time", "`at_ms` changed after signing", { ...good, at_ms: T + 21 }, "BadHandoff"),
    app(
      "c6-moved-transplanted",
      "well signed, but over another record's head",
      handoff(otherHead, 20, HOST),
      "BadHandoff",
    ),
    app(
      "c6-moved-stale-head",
      "well signed over the record's earlier head (before the suspension)",
      handoff(headOf([exec(1)]), 20, HOST),
      "BadHandoff",
    ),
    app(
      "c6-moved-while-active",
      "a hand-off of an active run",
      handoff(headOf([exec(1)]), 20, HOST),
      "PhaseViolation",
      [exec(1)],
    ),
    app(
      "c6-moved-forged-while-active",
      "forged and out of phase: the phase rule is named first",
      { ...handoff(headOf([exec(1)]), 20, HOST), to: "x" },
      "PhaseViolation",
      [exec(1)],
    ),
    app(
      "c6-moved-time-regression",
      "a hand-off timed before the suspension",
      handoff(head, 5, HOST),
      "TimeRegression",
    ),
    verify(
      "c6-moved-wire-forged",
      "a record ending in a hand-off whose signature is by another key, heads consistent",
      forge([...PARKED, handoff(head, 20, HOST, TO, key("mallory")) as unknown as Segment]),
      "BadHandoff",
    ),
    verify(
      "c6-moved-wire-order",
      "a forged hand-off whose stated head is also wrong: the hand-off is named, not the head",
      (() => {
        const text = forge([...PARKED, { ...good, to: "y" } as unknown as Segment]);
        const ls = text.split("\n");
        ls[3] = ls[3]!.replace(/"head":"blake3:[0-9a-f]{64}","n":3/, `"head":"${otherHead}","n":3`);
        return ls.join("\n");
      })(),
      "BadHandoff",
    ),
  ];
}

// The same 64 bytes in base64 with a padding bit set: decodes alike, but is not the canonical text.
function uncanonical(sig: string): string {
  const ABC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  return sig.slice(0, 85) + ABC[ABC.indexOf(sig[85]!) | 1]! + sig.slice(86);
}

function malformedMoved(): Vector[] {
  const good = handoff(headOf(PARKED), 20, HOST);
  const unsigned: Record<string, Json> = { ...good };
  delete unsigned.sig;
  const headless: Record<string, Json> = { ...good };
  delete headless.head;
  const bad: [string, Json][] = [
    ["extra-member", { ...good, snapshot: SNAP as unknown as Json }],
    ["no-sig", unsigned],
    ["no-head", headless],
    ["sig-short", { ...good, sig: toBase64(new Uint8Array(63)) }],
    ["sig-not-base64", { ...good, sig: "!".repeat(88) }],
    ["sig-uncanonical", { ...good, sig: uncanonical(good.sig as string) }],
    ["signer-not-didkey", { ...good, signer: "did:web:example.com" }],
    ["to-empty", { ...good, to: "" }],
    ["to-too-long", { ...good, to: "x".repeat(257) }],
    ["to-number", { ...good, to: 7 }],
    ["head-not-digest", { ...good, head: "sha256:" + "0".repeat(64) }],
    ["at-negative", { ...good, at_ms: -1 }],
  ];
  return bad.map(([n, seg]) =>
    errCase(
      C,
      `c6-segment-moved-${n}`,
      `malformed hand-off: ${n}`,
      "runrecord.append",
      { record: wire(PARKED), segment: seg },
      "BadSegment",
    ),
  );
}

/** movedVectors: every C6 vector of the hand-off (§13.2a, §13.3 rule 6, §13.4 item 2). */
export function movedVectors(): Vector[] {
  return [...validMoved(), ...afterMoved(), ...forgedMoved(), ...malformedMoved()];
}
