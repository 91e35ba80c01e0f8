// @sbx/sandbox-attest/energy — §6 Energy: figures with provenance, models, receipts, receipt chains.
export { ENERGY_CHAIN_TAG, ENERGY_DOMAINS, ENERGY_RECEIPT_TYPE, PROVENANCES } from "./types.ts";
export type {
  AttributedComponent,
  CpuCoefficients,
  EnergyComponent,
  EnergyDomain,
  EnergyFigure,
  EnergyReceipt,
  EstimatedComponent,
  MeasuredComponent,
  MemoryCoefficients,
  MeterReading,
  Model,
  ModelName,
  Provenance,
  Ratio,
  StorageCoefficients,
} from "./types.ts";
export {
  CCF_DEFAULTS,
  MODEL_NAMES,
  estimateCpu,
  estimateEnergy,
  estimateMemory,
  estimateStorage,
  modelEnergy,
} from "./model.ts";
export type { Activity, EstimateOptions } from "./model.ts";
export {
  assertComponent,
  attribute,
  attributedEnergy,
  checkRatio,
  figureOf,
  measure,
  weakestProvenance,
} from "./component.ts";
export { assertReceipt, buildReceipt, openReceipt, signReceipt } from "./receipt.ts";
export type { OpenedReceipt, ReceiptFields } from "./receipt.ts";
export { energyGenesis, makeReceipt, startEnergyChain, verifyEnergyChain } from "./chain.ts";
export type { ChainOptions, EnergyChainState, MadeReceipt, VerifiedChain } from "./chain.ts";
