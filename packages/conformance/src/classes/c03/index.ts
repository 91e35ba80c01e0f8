// C3: units (§4) and execution attestations (§7.1–§7.6): valid statements; every field of a signed
// statement altered without re-signing; re-signed alterations refused by shape or by binding; the
// wrong key. Expected codes are stated here, per field, not computed by running the verifier.
import { addressOf, isDigest, type Envelope, type Json, type JsonObject } from "@sbx/wire";
import { verifyAttestation, type AttestationExpect } from "@sbx/sandbox-attest/attestation";
import { parseUnit, unitId, UNIT_TYPE } from "@sbx/sandbox-attest/unit";
import { errCase, okCase } from "../../generate/build.ts";
import type { ConformanceClass, Handler, Vector } from "../../types.ts";
import { obj } from "../input.ts";
import {
  C,
  attest,
  bindings,
  d,
  host,
  okOut,
  predicate,
  unit,
  unlinkedPredicate,
  verifyInput,
} from "./fixture.ts";
import { resignedAlterations, shapeVectors, unsignedAlterations } from "./altered.ts";
import { bindingVectors, keyVectors } from "./keys.ts";
import { intervalVectors, OP as INTERVAL_OP, verifyIntervalOp } from "./interval.ts";

/** expectOf reads the vector's snake_case bindings into the verifier's options. */
function expectOf(x: JsonObject): AttestationExpect {
  const m: Record<string, keyof AttestationExpect> = {
    host: "host",
    unit_id: "unitId",
    grants_id: "grantsId",
    manifest: "manifest",
    exec_policy: "policy",
    receipt: "receipt",
    total_uj: "totalUj",
    journal_root: "journalRoot",
    journal_events: "journalEvents",
    run_head: "runHead",
    audit_prev: "auditPrev",
    unit: "unit",
  };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) {
    const name = m[k];
    if (name === undefined) throw new TypeError(`unknown expectation ${k}`);
    out[name] = v;
  }
  return out;
}

const ops: Record<string, Handler> = {
  [INTERVAL_OP]: verifyIntervalOp,
  "unit.address": (i) => ({ unit_id: unitId(parseUnit(obj(i, "input").unit)) }),
  "attestation.verify": (i) => {
    const o = obj(i, "input");
    const v = verifyAttestation(o.envelope, expectOf(o.expect === undefined ? {} : obj(o.expect, "expect")));
    return { address: v.address, predicate: v.predicate as unknown as Json };
  },
};
function unitVectors(): Vector[] {
  const u = unit as unknown as JsonObject;
  return [
    okCase(
      C,
      "c3-unit-address",
      "unit_id is the address of the canonical descriptor (§4.2)",
      "unit.address",
      { unit: u },
      { unit_id: addressOf(u) },
    ),
    okCase(
      C,
      "c3-unit-entry",
      "a descriptor naming an entry point and a workspace",
      "unit.address",
      { unit: { type: UNIT_TYPE, entry: "tests", workspace: d("ws"), manifest: d("manifest"), level: "S1" } },
      {
        unit_id: addressOf({
          type: UNIT_TYPE,
          entry: "tests",
          workspace: d("ws"),
          manifest: d("manifest"),
          level: "S1",
        }),
      },
    ),
    ...(
      [
        ["unknown-member", { ...u, extra: 1 }],
        ["argv-and-entry", { ...u, entry: "x" }],
        ["neither", { type: UNIT_TYPE, manifest: d("manifest"), level: "S4" }],
        ["empty-argv", { ...u, argv: [] }],
        ["nul-in-arg", { ...u, argv: ["a\u0000b"] }],
        ["bad-level", { ...u, level: "S9" }],
        ["bad-manifest", { ...u, manifest: "sha256:" + "0".repeat(64) }],
        ["bad-label", { ...u, labels: { "Up Per": "x" } }],
        ["wrong-type", { ...u, type: "https://sandbox-attest.dev/unit/v0" }],
      ] as [string, Json][]
    ).map(([id, v]) =>
      errCase(C, `c3-unit-${id}`, `descriptor refused: ${id}`, "unit.address", { unit: v }, "BadUnit"),
    ),
    // §2.9: lengths in characters are UTF-16 code units; a character above U+FFFF counts two.
    ...(
      [
        ["label-utf16-256", { ...u, labels: { task: astral(128) } }, true],
        ["label-utf16-258", { ...u, labels: { task: astral(129) } }, false],
        ["argv-utf16-4096", { ...u, argv: ["python3", astral(2048)] }, true],
        ["argv-utf16-4098", { ...u, argv: ["python3", astral(2049)] }, false],
      ] as [string, JsonObject, boolean][]
    ).map(([id, v, ok]) => {
      const desc = `${id.split("-")[0]!} of ${id.split("-")[2]!} UTF-16 code units (characters above U+FFFF)`;
      return ok
        ? okCase(C, `c3-unit-${id}`, desc, "unit.address", { unit: v }, { unit_id: addressOf(v) })
        : errCase(C, `c3-unit-${id}`, `${desc}: too long`, "unit.address", { unit: v }, "BadUnit");
    }),
  ];
}

const astral = (n: number): string => "\u{1F600}".repeat(n);

function validVectors(): Vector[] {
  const full = attest(predicate(), host);
  const bare = attest(unlinkedPredicate(), host);
  const variants: [string, string, Envelope, JsonObject][] = [
    ["full", "every member, every binding given", full, bindings()],
    ["no-bindings", "verified with no bindings given", full, {}],
    [
      "signaled",
      "outcome: killed by a signal",
      attest(predicate({ outcome: { status: "signaled", signal: "SIGKILL" } }), host),
      bindings(),
    ],
    [
      "stopped",
      "outcome: the host stopped the unit for its grants' budget (§7.2 stopped)",
      attest(
        predicate({ outcome: { status: "signaled", signal: "SIGTERM", stopped: "BudgetExhausted" } }),
        host,
      ),
      bindings(),
    ],
    [
      "overshoot",
      "outcome: stopped for the budget, 12,000 µJ used beyond it (§7.2 overshoot_uj, jcp §4.3)",
      attest(
        predicate({
          outcome: {
            status: "signaled",
            signal: "SIGTERM",
            stopped: "BudgetExhausted",
            overshoot_uj: "12000",
          },
        }),
        host,
      ),
      bindings(),
    ],
    [
      "oom",
      "outcome: killed by the OOM killer at the memory limit (limits: memory, §5.3)",
      attest(predicate({ outcome: { status: "signaled", signal: "SIGKILL", limits: ["memory"] } }), host),
      bindings(),
    ],
    [
      "limits",
      "outcome: exited after running into every limit (limits: disk, memory, pids)",
      attest(
        predicate({ outcome: { status: "exited", exit_code: 1, limits: ["disk", "memory", "pids"] } }),
        host,
      ),
      bindings(),
    ],
    [
      "unisolated",
      "level S0: a plain process run that states no isolation",
      attest(predicate({ level: "S0" }), host),
      bindings(),
    ],
    [
      "spawn-failed",
      "outcome: the program never started",
      attest(predicate({ outcome: { status: "spawn_failed", reason: "ENOENT" } }), host),
      bindings(),
    ],
    [
      "measured",
      "energy measured, level S7, zero-length interval",
      attest(
        predicate({
          energy: { receipt: d("receipt"), total_uj: "2750000", provenance: "measured" },
          level: "S7",
          interval: { start_ms: 5, end_ms: 5 },
        }),
        host,
      ),
      bindings(),
    ],
  ];
  return [
    ...variants.map(([id, desc, e, x]) =>
      okCase(C, `c3-valid-${id}`, desc, "attestation.verify", verifyInput(e, x), okOut(e)),
    ),
    okCase(
      C,
      "c3-valid-unlinked",
      "no audit link and no run head, verified as such (null)",
      "attestation.verify",
      verifyInput(bare, { ...bindings(), run_head: null, audit_prev: null }),
      okOut(bare),
    ),
    errCase(
      C,
      "c3-unlinked-but-head-expected",
      "verifier expects a run head the attestation lacks",
      "attestation.verify",
      verifyInput(bare, { run_head: d("run-head") }),
      "RunHeadMismatch",
    ),
  ];
}

// Guards the vectors against a generator that forgot the digest form of its inputs.
function checkDigests(v: Vector[]): Vector[] {
  for (const x of v)
    if (x.op === "unit.address" && x.expect === "ok" && !isDigest((x.output as JsonObject).unit_id))
      throw new Error(x.id);
  return v;
}

export const klass: ConformanceClass = {
  id: C,
  title: "attestations",
  file: "core.json",
  ops,
  generate: () =>
    checkDigests([
      ...unitVectors(),
      ...validVectors(),
      ...unsignedAlterations(),
      ...resignedAlterations(),
      ...shapeVectors(),
      ...bindingVectors(),
      ...keyVectors(),
      ...intervalVectors(),
    ]),
};
