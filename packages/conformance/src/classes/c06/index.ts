// C6: durable run records (§13): chain advance and verification across execute → suspend → resume
// → execute → close, forked snapshots, execution while parked, tamper-evidence of the wire form,
// appends after close, splices across units and grant sets, idle-energy accumulation, fs DAG roots.
import type { ConformanceClass } from "../../types.ts";
import { phaseVectors, segmentVectors, validVectors } from "./cases.ts";
import { movedVectors } from "./moved.ts";
import { ops } from "./ops.ts";
import {
  energyVectors,
  fsTreeVectors,
  resumeVectors,
  spliceVectors,
  statedHeadVectors,
  wireVectors,
} from "./tamper.ts";

export const klass: ConformanceClass = {
  id: "C6",
  title: "durable run records",
  file: "durable.json",
  ops,
  generate: () => [
    ...validVectors(),
    ...phaseVectors(),
    ...segmentVectors(),
    ...wireVectors(),
    ...statedHeadVectors(),
    ...spliceVectors(),
    ...resumeVectors(),
    ...energyVectors(),
    ...fsTreeVectors(),
    ...movedVectors(),
  ],
};
