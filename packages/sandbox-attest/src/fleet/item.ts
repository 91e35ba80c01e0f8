// §16.1 Fleet items: the strict reader, and the item's canonical bytes (the leaf data of §16.2).
// Every member is drawn from a character set JCS never escapes, so the canonical form is written
// directly; test/fleet checks it against the general JCS encoder on random items.
import { isAmount, isDigest, utf8 } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { FLEET_OUTCOMES, type FleetItem } from "./types.ts";

/** Fleet item ids: 1 to 200 characters of letters, digits and `._:/@+-`, starting with a letter or digit. */
export const FLEET_ITEM_RE = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/;

function bad(msg: string): never {
  throw new SandboxAttestError("BadFleetItem", msg);
}

/**
 * parseFleetItem checks a fleet item's shape (§16.1): exactly {item, head, energy_uj, outcome}, a
 * valid id, a digest head, an amount and a close outcome. Refuses `BadFleetItem` otherwise.
 */
export function parseFleetItem(v: unknown): FleetItem {
  const o = v as Record<string, unknown> | null;
  if (typeof o !== "object" || o === null || Array.isArray(o)) bad("a fleet item is an object");
  const keys = Object.keys(o);
  if (keys.length !== 4 || !("item" in o && "head" in o && "energy_uj" in o && "outcome" in o))
    bad(`fleet item members are ${keys.sort().join(",")}`);
  if (typeof o.item !== "string" || !FLEET_ITEM_RE.test(o.item)) bad("item id is not a valid name");
  if (!isDigest(o.head)) bad(`item ${o.item}: head is not a digest`);
  if (!isAmount(o.energy_uj)) bad(`item ${o.item}: energy_uj is not an amount`);
  if (!(FLEET_OUTCOMES as readonly unknown[]).includes(o.outcome))
    bad(`item ${o.item}: outcome ${String(o.outcome)}`);
  return o as unknown as FleetItem;
}

/** itemText returns JCS(item) for a parsed item: the members in code-point order, no escapes needed. */
export function itemText(i: FleetItem): string {
  return `{"energy_uj":"${i.energy_uj}","head":"${i.head}","item":"${i.item}","outcome":"${i.outcome}"}`;
}

/** itemBytes returns the UTF-8 bytes of JCS(item), the leaf data of §16.2. */
export function itemBytes(i: FleetItem): Uint8Array {
  return utf8(itemText(i));
}
