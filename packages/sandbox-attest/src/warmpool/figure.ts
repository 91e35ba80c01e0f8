// §15.3 The energy figures a pool ledger carries: lists of §6.1 energy components, each with its
// provenance and, when estimated, the model, inputs and coefficients that recompute it (§6.3).
import { isAmount, parseAmount } from "@sbx/wire";
import type { EnergyComponent } from "../energy/types.ts";
import { ENERGY_DOMAINS, PROVENANCES } from "../energy/types.ts";
import { modelEnergy } from "../energy/model.ts";
import { SandboxAttestError } from "../errors.ts";

/** The most components one ledger figure may list. */
export const FIGURE_MAX_COMPONENTS = 16;

function bad(msg: string): never {
  throw new SandboxAttestError("BadPoolEntry", msg);
}

function assertComponent(c: unknown, where: string): asserts c is EnergyComponent {
  const o = c as Record<string, unknown> | null;
  if (typeof o !== "object" || o === null || Array.isArray(o)) bad(`${where}: a component is an object`);
  if (!(ENERGY_DOMAINS as readonly unknown[]).includes(o.domain) || o.domain === "warmpool")
    bad(`${where}: component domain ${String(o.domain)}`);
  if (!isAmount(o.uj) || typeof o.source !== "string" || o.source.length === 0)
    bad(`${where}: a component has uj and a source`);
  if (!(PROVENANCES as readonly unknown[]).includes(o.provenance))
    bad(`${where}: provenance ${String(o.provenance)}`);
  const members = Object.keys(o).sort().join(",");
  const want = {
    measured: "domain,provenance,source,uj",
    attributed: "domain,provenance,ratio,shared_uj,source,uj",
    estimated: "domain,model,provenance,source,uj",
  }[o.provenance as string];
  if (members !== want)
    bad(`${where}: ${String(o.provenance)} component members are ${members}, want ${want ?? ""}`);
  if (o.provenance === "estimated" && modelEnergy(o.model as never) !== parseAmount(o.uj))
    bad(`${where}: estimated uj does not recompute from its model`);
}

/**
 * assertFigure refuses (`BadPoolEntry`) anything but a list of 1 to 16 energy components (§15.3):
 * domains other than warmpool, §6.2 provenance members, and estimated figures that recompute.
 */
export function assertFigure(f: unknown, where: string): asserts f is readonly EnergyComponent[] {
  if (!Array.isArray(f) || f.length === 0 || f.length > FIGURE_MAX_COMPONENTS)
    bad(`${where}: a figure lists 1 to ${FIGURE_MAX_COMPONENTS} components`);
  for (const c of f) assertComponent(c, where);
}

/** figureUj sums a figure's components, in microjoules. */
export function figureUj(f: readonly EnergyComponent[]): bigint {
  let sum = 0n;
  for (const c of f) sum += parseAmount(c.uj);
  return sum;
}
