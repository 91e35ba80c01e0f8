// The capabilities handshake (§11.2): before any vector, the harness asks the implementation
// which classes it implements with the op `adapter.capabilities`. An implementation that answers
// UnknownOp declares nothing and so claims every class, live cases included.
import type { Json } from "@sbx/wire";
import type { Capabilities, ClassId, OpResult } from "../types.ts";

/** CAPABILITIES_OP is the op name of the handshake. */
export const CAPABILITIES_OP = "adapter.capabilities";

/**
 * readCapabilities turns the handshake's result into Capabilities. Output shape:
 * `{"classes": ["C1", …] | "all", "live": boolean}`. Throws a TypeError on any other answer, so a
 * malformed declaration never narrows the run silently.
 */
export function readCapabilities(r: OpResult): Capabilities {
  if (!r.ok) {
    if (r.error === "UnknownOp") return { classes: "all", live: true };
    throw new TypeError(`${CAPABILITIES_OP} failed: ${r.error}`);
  }
  const out = r.output as { classes?: Json; live?: Json } | null;
  const live = out?.live;
  const classes = out?.classes;
  if (typeof live !== "boolean") throw new TypeError(`${CAPABILITIES_OP}: live must be a boolean`);
  if (classes === "all") return { classes, live };
  if (!Array.isArray(classes) || !classes.every((c) => typeof c === "string" && /^C[1-9]\d*$/.test(c)))
    throw new TypeError(`${CAPABILITIES_OP}: classes must be "all" or a list of class ids`);
  return { classes: classes as ClassId[], live };
}

/** inScope says whether a class is claimed by the declared capabilities. */
export function inScope(caps: Capabilities, id: ClassId): boolean {
  return caps.classes === "all" || caps.classes.includes(id);
}
