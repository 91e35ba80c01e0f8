// §15.3 The energy figures a pool ledger carries: lists of §6.1 energy components, each with its
// provenance and, when estimated, the model, inputs and coefficients that recompute it (§6.3).
import { parseAmount } from "@sbx/wire";
import { assertComponent } from "../energy/component.ts";
import type { EnergyComponent } from "../energy/types.ts";
import { SandboxAttestError } from "../errors.ts";

/** The most components one ledger figure may list. */
export const FIGURE_MAX_COMPONENTS = 16;

/**
 * assertFigure checks a ledger figure (§15.3): a list of 1 to 16 components (`BadPoolEntry`), each a
 * valid §6.1 component (assertComponent's codes, e.g. `EstimateMismatch` for an estimate that does
 * not recompute), none in the `warmpool` domain and none carrying `ref` (`BadPoolEntry`): those are
 * what a claim turns them into.
 */
export function assertFigure(f: unknown, where: string): asserts f is readonly EnergyComponent[] {
  if (!Array.isArray(f) || f.length === 0 || f.length > FIGURE_MAX_COMPONENTS)
    throw new SandboxAttestError(
      "BadPoolEntry",
      `${where}: a figure lists 1 to ${FIGURE_MAX_COMPONENTS} components`,
    );
  for (const c of f as unknown[]) {
    assertComponent(c);
    if (c.domain === "warmpool" || c.ref !== undefined)
      throw new SandboxAttestError("BadPoolEntry", `${where}: a ledger figure is not yet a warmpool charge`);
  }
}

/** figureUj sums a figure's components, in microjoules. */
export function figureUj(f: readonly EnergyComponent[]): bigint {
  let sum = 0n;
  for (const c of f) sum += parseAmount(c.uj);
  return sum;
}
