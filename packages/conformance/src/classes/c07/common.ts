// C7 shared: the class id, fixed keys and the pinned images every C7 vector uses.
import { key } from "../../generate/keys.ts";

export const C = "C7" as const;
export const steward = key("steward");
export const mallory = key("mallory");
export const HEX = "0123456789abcdef".repeat(4);
export const PIN = `registry.example/team/env@sha256:${HEX}`;
