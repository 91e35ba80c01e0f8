// §4.1 The unit descriptor: what a unit of agent work is, in canonical JSON, and its address
// `unit_id`. Nothing about how or where it ran belongs here; that is the attestation's (§7.2).
import { addressOf, type Digest, type Json } from "@sbx/wire";
import { fields, isObject } from "./fields.ts";

/** The descriptor's type URI; a later version of the form gets a new URI. */
export const UNIT_TYPE = "https://sandbox-attest.dev/unit/v1";

/**
 * Executor levels (§9): S1–S7, each including the ones below it, and S0 for a host that provides
 * none of §5's isolation (a plain process run): what S0 attests holds only as far as the host is trusted.
 */
export const LEVELS = ["S0", "S1", "S2", "S3", "S4", "S5", "S6", "S7"] as const;
/** One executor level (§9, §7.2). */
export type Level = (typeof LEVELS)[number];

/** Limits on a descriptor (§4.1): argv entries, argument length, labels, label key and value length. */
export const UNIT_LIMITS = { argv: 256, arg: 4096, labels: 32, labelKey: 63, labelValue: 256 } as const;

const LABEL_KEY = /^[a-z0-9][a-z0-9._/-]{0,62}$/;

/**
 * A unit descriptor (§4.1). Exactly one of `argv` (a command line, argv[0] the program) or `entry`
 * (a named entry point the manifest's environment defines) says what runs. `workspace` is the
 * address of the workspace tree it starts from (§13 filesystem root), when it starts from one;
 * `manifest` the address of its environment manifest (§14); `level` the executor level it asks for
 * (§9); `labels` free key/value metadata that is part of its identity.
 */
export interface UnitDescriptor {
  readonly type: typeof UNIT_TYPE;
  readonly argv?: readonly string[];
  readonly entry?: string;
  readonly workspace?: Digest;
  readonly manifest: Digest;
  readonly level: Level;
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * parseUnit checks a descriptor received as JSON (§4.1) and returns it typed. Refuses with
 * `BadUnit`: a missing or unknown member, a wrong type URI, both or neither of argv and entry, an
 * empty or oversize argv, an argument holding NUL, a malformed digest, level or label.
 */
export function parseUnit(value: unknown): UnitDescriptor {
  const f = fields("BadUnit");
  const o = f.obj(value, "unit", ["type", "manifest", "level"], ["argv", "entry", "workspace", "labels"]);
  if (o.type !== UNIT_TYPE) f.fail(`unit.type must be ${UNIT_TYPE}`);
  if ((o.argv === undefined) === (o.entry === undefined)) f.fail("unit needs exactly one of argv and entry");
  const out: Record<string, unknown> = {
    type: UNIT_TYPE,
    manifest: f.digest(o.manifest, "unit.manifest"),
    level: f.oneOf(o.level, "unit.level", LEVELS),
  };
  if (o.argv !== undefined) out.argv = parseArgv(o.argv);
  if (o.entry !== undefined) out.entry = f.str(o.entry, "unit.entry", UNIT_LIMITS.arg);
  if (o.workspace !== undefined) out.workspace = f.digest(o.workspace, "unit.workspace");
  if (o.labels !== undefined) out.labels = parseLabels(o.labels);
  return out as unknown as UnitDescriptor;
}

function parseArgv(v: Json): string[] {
  const f = fields("BadUnit");
  if (!Array.isArray(v) || v.length === 0 || v.length > UNIT_LIMITS.argv)
    return f.fail(`unit.argv must hold 1 to ${UNIT_LIMITS.argv} strings`);
  return v.map((a, i) => {
    if (typeof a !== "string" || a.length > UNIT_LIMITS.arg || a.includes("\0"))
      f.fail(`unit.argv[${i}] must be a string without NUL of at most ${UNIT_LIMITS.arg} characters`);
    return a as string;
  });
}

function parseLabels(v: Json): Record<string, string> {
  const f = fields("BadUnit");
  if (!isObject(v)) return f.fail("unit.labels is not an object");
  const o = v;
  const keys = Object.keys(o);
  if (keys.length > UNIT_LIMITS.labels) f.fail(`unit.labels holds more than ${UNIT_LIMITS.labels} entries`);
  const out: Record<string, string> = {};
  for (const k of keys) {
    if (!LABEL_KEY.test(k)) f.fail(`unit.labels key ${JSON.stringify(k)} is not [a-z0-9][a-z0-9._/-]{0,62}`);
    out[k] = f.str(o[k], `unit.labels.${k}`, UNIT_LIMITS.labelValue);
  }
  return out;
}

/** The fields a caller gives to describe a unit; `type` is filled in. */
export type UnitInput = Omit<UnitDescriptor, "type">;

/** makeUnit builds a descriptor from its fields (§4.1), refusing what parseUnit refuses (`BadUnit`). */
export function makeUnit(input: UnitInput): UnitDescriptor {
  return parseUnit({ type: UNIT_TYPE, ...input });
}

/** unitId returns `unit_id`, the content address of a descriptor (§4.2); refuses a bad one (`BadUnit`). */
export function unitId(unit: UnitDescriptor): Digest {
  return addressOf(parseUnit(unit));
}
