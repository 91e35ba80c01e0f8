// `sbx run` of a durable run (§13): the unit descriptor with a fresh nonce (two runs of the same work
// never share head₀, §13.1), stored so another host can read its command; the record created in the
// run store; then this process supervises the sandbox (or, with --detach, a background child does).
import { randomBytes } from "node:crypto";
import { canonicalBytes, isDigest, type Digest } from "@sbx/wire";
import { makeUnit, unitId, type Level } from "@sbx/sandbox-attest/unit";
import { startEnergyChain } from "@sbx/sandbox-attest/energy";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { checkEnvironment, hostOffer, NO_MANIFEST, takeRunLock } from "@sbx/host/durable";
import type { SandboxOptions } from "@sbx/host/sandbox";
import type { Manifest } from "@sbx/sandbox-attest/manifest";
import { EXIT, UsageError, writeBytes, type Io } from "../../../command.ts";
import { openAnyRunStore } from "@sbx/host/stores";
import { runPaths, writeInfo } from "@sbx/host/durable";
import { startKeyOf } from "./runkey.ts";
import { asDetachedChild, spawnDetached, notifyDetached } from "./detach.ts";
import { durableImageSandbox, pinnedImageOf, storeRunManifest } from "./image.ts";
import { Supervisor, type SupervisorEnd } from "@sbx/host/durable";
import { storePolicy } from "@sbx/host/durable";
import { prepareGrantRun } from "../../../flags/grant.ts";
import { governanceOf, storeChain } from "@sbx/host/durable";
import type { RunGate } from "../run-gate.ts";

type Values = Record<string, string | boolean | readonly string[] | undefined>;

/** The flags that make `sbx run` durable: a run store named, or a detached run. */
export function isDurable(v: Values): boolean {
  return v.durable === true || v.detach === true || typeof v.store === "string";
}

/** What run.ts has already checked and resolved for a durable run. */
export interface DurableRunInput {
  readonly values: Values;
  readonly args: readonly string[];
  readonly argv: readonly string[];
  readonly sandbox: SandboxOptions | null;
  readonly manifest: Digest;
  readonly grantsId: Digest;
  readonly policy: Digest;
  readonly maxLevel?: Level;
  /** §14.9 The manifest of `--manifest FILE` (its image already applied to `sandbox`). */
  readonly pinned?: Manifest;
  /** --exec-policy FILE: every interval gated (§5.5.5), the policy named by the unit (governed.ts). */
  readonly gate?: RunGate | null;
}

const NOT_DURABLE = ["unsandboxed", "watch", "out", "json", "timeout-ms"];

/**
 * sbx run --durable/--store/--detach: see the file comment. In a detached child, a refusal before
 * the run goes is told to the parent with its code (detach.ts).
 */
export function runDurable(d: DurableRunInput, io: Io): Promise<number> {
  return asDetachedChild(() => startAndSupervise(d, io));
}

async function startAndSupervise(d: DurableRunInput, io: Io): Promise<number> {
  const bad = NOT_DURABLE.filter((k) => d.values[k] !== undefined);
  if (bad.length > 0) throw new UsageError(`a durable run does not take --${bad.join(", --")}`);
  if (d.sandbox === null) throw new UsageError("a durable run runs in a sandbox");
  const say = (l: string) => io.err(`sbx: ${l}`);
  const given = d.values.key as string | undefined;
  const store = await openAnyRunStore(d.values.store as string | undefined, true);
  // Chosen (and a store key made, announced) here, so a detached run says it on this terminal.
  const { key: hostKey, ref: keyRef } = startKeyOf(store.root, given, say);
  if (d.values.detach === true)
    return spawnDetached(d.values.store as string | undefined, ["run", ...d.args], io);
  await storeRunManifest(store, d.pinned ?? null);
  const sat = await checkEnvironment(store, d.manifest, hostOffer(store.root));
  if (!sat.ok)
    throw new SandboxAttestError(
      sat.code,
      `this host does not satisfy manifest ${d.manifest}: ${JSON.stringify(sat.mismatches)}`,
    );
  // §14.9 The manifest's image is the run's system (already applied for --manifest FILE).
  const imageSandbox =
    d.sandbox.image !== undefined
      ? d.sandbox
      : await durableImageSandbox(store, d.manifest, d.values.images as string | undefined, d.sandbox, false);
  // --grant CHAIN (jcp §4.4): verified now; its grant set is the run's (granted.ts).
  const grant = prepareGrantRun(d.values, hostKey, true, imageSandbox);
  if (grant && d.values.grants !== undefined)
    throw new UsageError("--grant computes grants_id: drop --grants");
  const grantsId = grant?.grantsId ?? d.grantsId;
  const nonce = randomBytes(16).toString("hex");
  const labels = {
    nonce,
    ...(await storePolicy(store, d.gate ?? null)),
    ...(grant
      ? await storeChain(store, grant.ledger.set.length > 1 ? grant.ledger.set : grant.ledger.envs)
      : {}),
  };
  const unit = makeUnit({ argv: [...d.argv], manifest: d.manifest, level: "S5", labels });
  const uid = unitId(unit);
  if ((await store.putObject(canonicalBytes(unit))) !== uid)
    throw new Error("unit stored under another address");
  // "No manifest" is the address of {}: stored too, so a verifier finds every object the run cites.
  if (d.manifest === NO_MANIFEST) await store.putObject(canonicalBytes({}));
  const id = await store.createRecord(uid, grantsId);
  const paths = runPaths(store.root, id);
  const lock = takeRunLock(paths.lock);
  writeInfo(paths, { workspace: imageSandbox.workspace, key: keyRef });
  let sup: Supervisor;
  try {
    const sandbox = grant ? await grant.open() : imageSandbox;
    sup = await Supervisor.start({
      store,
      id,
      head: id,
      argv: d.argv,
      unit,
      unitId: uid,
      grantsId,
      manifest: d.manifest,
      pinnedImage: await pinnedImageOf(store, d.manifest),
      policy: d.policy,
      hostKey,
      sandbox,
      chain: startEnergyChain(uid, grantsId),
      paths,
      lock,
      ...(d.maxLevel !== undefined ? { maxLevel: d.maxLevel } : {}),
      ...(d.gate ? { execPolicy: d.gate.execPolicy } : {}),
      onOutput: (s, data) => writeBytes(io, s === "stdout" ? "out" : "err", data),
      say,
      ...(grant ? { governance: governanceOf(store, id, grant, say) } : {}),
    });
  } catch (e) {
    lock.release();
    await grant?.close();
    throw e;
  }
  if (grant) {
    void sup.ended.then(() => grant.close());
    say(`under grants ${grantsId}: ${String(grant.startRemaining)} µJ left, debited on ${grant.ledger.path}`);
  }
  io.out(`run ${id}`);
  io.err(`sbx: run ${id} in ${store.root}, workspace ${d.sandbox.workspace}, host ${hostKey.did}`);
  notifyDetached(id);
  return exitOf(await sup.ended);
}

/** exitOf: 0 when the run was parked or closed, or its command exited 0; else 1. */
export function exitOf(end: SupervisorEnd): number {
  if (end.reason !== "exited") return EXIT.ok;
  const o = end.sealed?.outcome;
  return o?.status === "exited" && o.exit_code === 0 ? EXIT.ok : EXIT.invalid;
}

/** isRunId reports whether a string is a run id. */
export const isRunId = isDigest;
