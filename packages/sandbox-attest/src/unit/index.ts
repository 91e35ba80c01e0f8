// §4 Units and grant binding: the unit descriptor, `unit_id` and `grants_id`.
export { UNIT_TYPE, LEVELS, UNIT_LIMITS, parseUnit, makeUnit, unitId } from "./descriptor.ts";
export type { UnitDescriptor, UnitInput, Level } from "./descriptor.ts";
export { parseGrantsId } from "./grants.ts";
