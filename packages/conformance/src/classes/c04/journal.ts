// C4 vectors on whole journals: heads, ordering, strict event validation, verification against a head.
import type { Json, JsonObject } from "@sbx/wire";
import { errCase, okCase } from "../../generate/build.ts";
import type { Vector } from "../../types.ts";
import { alter, eventsOf, J, journal } from "./fixture.ts";

const C = "C4" as const;

export function headVectors(): Vector[] {
  const j = journal();
  const evs = eventsOf(j);
  const out: Vector[] = [];
  for (const n of [0, 1, 2, 5, 11])
    out.push(
      okCase(
        C,
        `c4-head-${n}`,
        `journal head over the first ${n} events: {size, root}`,
        "journal.head",
        { events: evs.slice(0, n) },
        { head: J(j.head(n)) },
      ),
    );
  const swap = (a: number) => evs.map((e, k) => (k === a ? evs[a + 1]! : k === a + 1 ? evs[a]! : e));
  for (const a of [0, 4, 9])
    out.push(
      errCase(
        C,
        `c4-head-reordered-${a}`,
        `events ${a} and ${a + 1} swapped`,
        "journal.head",
        { events: swap(a) },
        "EventOutOfOrder",
      ),
    );
  out.push(
    errCase(
      C,
      "c4-head-gap",
      "event 5 removed: seq 6 follows seq 4",
      "journal.head",
      { events: evs.filter((_, k) => k !== 5) },
      "EventOutOfOrder",
    ),
  );
  out.push(
    errCase(
      C,
      "c4-head-seq-from-1",
      "numbering that starts at 1",
      "journal.head",
      { events: evs.map((e, k) => ({ ...e, seq: k + 1 })) },
      "EventOutOfOrder",
    ),
  );
  const chunk = (k: number, c: number) => evs.map((e, m) => (m === k ? { ...e, chunk: c } : e));
  out.push(
    errCase(
      C,
      "c4-head-chunk-skipped",
      "stdout chunk numbered 2 where 1 is next",
      "journal.head",
      { events: chunk(8, 2) },
      "EventOutOfOrder",
    ),
  );
  out.push(
    errCase(
      C,
      "c4-head-chunk-repeated",
      "stdout chunk 0 twice",
      "journal.head",
      { events: chunk(8, 0) },
      "EventOutOfOrder",
    ),
  );
  // §8.3 item 1: event by event, each event's §8.2 checks then its position, before the next.
  const lacking = (e: JsonObject): JsonObject => {
    const drop = Object.keys(e).find((k) => k !== "type" && k !== "seq");
    return Object.fromEntries(Object.entries(e).filter(([k]) => k !== drop));
  };
  out.push(
    errCase(
      C,
      "c4-head-position-before-later-form",
      "event 0 numbered 7, event 2 lacking a member: EventOutOfOrder at event 0 before event 2 is read",
      "journal.head",
      { events: evs.map((e, k) => (k === 0 ? { ...e, seq: 7 } : k === 2 ? lacking(e) : e)) },
      "EventOutOfOrder",
    ),
    errCase(
      C,
      "c4-head-form-before-position",
      "event 0 numbered 7 and lacking a member: MalformedEvent, its form before its position",
      "journal.head",
      { events: evs.map((e, k) => (k === 0 ? lacking({ ...e, seq: 7 }) : e)) },
      "MalformedEvent",
    ),
  );
  out.push(
    errCase(
      C,
      "c4-head-unknown-type",
      "an event type §8.2 does not define",
      "journal.head",
      { events: [{ type: "process.fork", seq: 0, pid: 1 }] },
      "UnknownEventType",
    ),
  );
  // §8.2 item 3: a `type` that is missing or not a string is a member of the wrong form
  // (MalformedEvent), even when the event also has members no type lists; UnknownEventType is only
  // for a string naming no type.
  out.push(
    errCase(
      C,
      "c4-head-type-not-string",
      "an event whose type is a number: MalformedEvent, not UnknownEventType",
      "journal.head",
      { events: [{ type: 7, seq: 0, pid: 1 }] },
      "MalformedEvent",
    ),
    errCase(
      C,
      "c4-head-no-type-extra-member",
      "an event with no type and a member no type lists: MalformedEvent before UnknownEventField",
      "journal.head",
      { events: [{ seq: 0, pid: 1, note: "x" }] },
      "MalformedEvent",
    ),
    errCase(
      C,
      "c4-head-unknown-type-missing-seq",
      "an unknown type with no seq: UnknownEventType is checked before any member",
      "journal.head",
      { events: [{ type: "process.fork" }] },
      "UnknownEventType",
    ),
  );
  for (const [k, e] of evs.entries()) {
    out.push(
      errCase(
        C,
        `c4-event-${k}-unknown-member`,
        `${e.type as string} with an extra member`,
        "journal.head",
        { events: [...evs.slice(0, k), { ...e, note: "x" }] },
        "UnknownEventField",
      ),
    );
    for (const m of Object.keys(e)) {
      const rest = Object.fromEntries(Object.entries(e).filter(([x]) => x !== m));
      out.push(
        errCase(
          C,
          `c4-event-${k}-missing-${m}`,
          `${e.type as string} without ${m}`,
          "journal.head",
          { events: [...evs.slice(0, k), rest] },
          "MalformedEvent",
        ),
      );
    }
  }
  const bad: [number, string, Json][] = [
    [2, "pid", 0],
    [2, "argv", ["a", 1]],
    [2, "binary", "sha256:" + "0".repeat(64)],
    [1, "route", "shebang"],
    [1, "allowed", "yes"],
    [1, "rule", "allow:python3"],
    [1, "source", "guess"],
    [1, "policy", null],
    [5, "digest", "blake3:00"],
    [4, "stream", "stdlog"],
    [4, "length", 6],
    [4, "length", "06"],
    [7, "size", "18446744073709551616"],
    [7, "path", ""],
    [10, "code", 256],
    [10, "signal", "SIGKILL"],
    [9, "signal", null],
    [9, "signal", "kill"],
    [0, "seq", -1],
  ];
  for (const [k, m, v] of bad)
    out.push(
      errCase(
        C,
        `c4-event-${k}-bad-${m}-${JSON.stringify(v).replace(/[^a-z0-9]/gi, "")}`,
        `${m} = ${JSON.stringify(v)}`,
        "journal.head",
        { events: [...evs.slice(0, k), { ...evs[k]!, [m]: v }] },
        "MalformedEvent",
      ),
    );
  return out;
}

/** numberingHolds states §8.3's rule: each stream's chunks are numbered 0, 1, 2, … in order. */
function numberingHolds(events: readonly JsonObject[]): boolean {
  const next = new Map<Json | undefined, number>();
  for (const e of events) {
    if (e.type !== "stdio.chunk") continue;
    if (e.chunk !== (next.get(e.stream) ?? 0)) return false;
    next.set(e.stream, (next.get(e.stream) ?? 0) + 1);
  }
  return true;
}

export function verifyVectors(): Vector[] {
  const j = journal();
  const evs = eventsOf(j);
  const head = J(j.head());
  const out: Vector[] = [
    okCase(
      C,
      "c4-verify-ok",
      "the events reproduce their head",
      "journal.verify",
      { events: evs, head },
      null,
    ),
  ];
  for (const [k, e] of evs.entries())
    for (const [m, v] of Object.entries(e)) {
      const w = m === "seq" ? undefined : alter(m, v);
      if (w !== undefined)
        out.push(
          errCase(
            C,
            `c4-verify-event-${k}-altered-${m}`,
            `event ${k}: ${m} changed`,
            "journal.verify",
            { events: evs.map((x, n) => (n === k ? { ...x, [m]: w } : x)), head },
            // §8.3 checks each stream's chunk numbering before any root is computed.
            numberingHolds(evs.map((x, n) => (n === k ? { ...x, [m]: w } : x)))
              ? "JournalRootMismatch"
              : "EventOutOfOrder",
          ),
        );
    }
  out.push(
    errCase(
      C,
      "c4-verify-truncated",
      "the last event dropped",
      "journal.verify",
      { events: evs.slice(0, -1), head },
      "JournalRootMismatch",
    ),
  );
  out.push(
    errCase(
      C,
      "c4-verify-size-x2",
      "head size doubled, root kept",
      "journal.verify",
      { events: evs, head: { ...j.head(), size: 22 } },
      "JournalRootMismatch",
    ),
  );
  out.push(
    errCase(
      C,
      "c4-verify-root-alone",
      "a root without its size",
      "journal.verify",
      { events: evs, head: { root: j.head().root } },
      "BadTreeHead",
    ),
  );
  out.push(
    errCase(
      C,
      "c4-verify-head-extra",
      "a head with an extra member",
      "journal.verify",
      { events: evs, head: { ...j.head(), alg: "blake3" } },
      "BadTreeHead",
    ),
  );
  out.push(
    errCase(
      C,
      "c4-verify-head-bad-root",
      "a head whose root is not a digest",
      "journal.verify",
      { events: evs, head: { size: 11, root: "blake3:00" } },
      "BadTreeHead",
    ),
  );
  return out;
}
