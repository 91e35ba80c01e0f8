// C7: environment manifests (sandbox-attest §14). Ingestion of JSONC devcontainer.json into the
// manifest (valid documents, real corpus files pinned), refusals naming every offending member (the
// member lists are written out by hand, per the spec's table), parse errors, signed-manifest
// verification broken systematically, and satisfaction of a manifest by an offered environment.
import { fromBase64, type Json, type JsonObject } from "@sbx/wire";
import {
  ingestManifest,
  satisfies,
  verifyManifest,
  type Manifest,
  type OfferedEnvironment,
} from "@sbx/sandbox-attest/manifest";
import type { ConformanceClass, Handler } from "../../types.ts";
import { obj, optionalStrings, str } from "../input.ts";
import { C } from "./common.ts";
import { ingestVectors, parseErrorVectors, refusalVectors } from "./ingest.ts";
import { satisfyVectors, verifyVectors } from "./signed.ts";

function source(o: JsonObject): Uint8Array | string {
  if (typeof o.source_b64 === "string") return fromBase64(o.source_b64) ?? new Uint8Array();
  return str(o.source, "input.source");
}

const ops: Record<string, Handler> = {
  "manifest.ingest": (i) => ingestManifest(source(obj(i))) as unknown as Json,
  // The refusal as data: its code and every offending member, sorted by pointer then code.
  "manifest.refusals": (i) => {
    try {
      ingestManifest(source(obj(i)));
    } catch (e) {
      const err = e as { code: string; members: { pointer: string; code: string }[] };
      // §14.8: a parse error is the op's error; its syntax errors are not compared.
      if (err.code === "ManifestParseError") throw e;
      return { code: err.code, members: err.members.map((m) => ({ pointer: m.pointer, code: m.code })) };
    }
    return { code: "accepted", members: [] };
  },
  "manifest.verify": (i) => {
    const o = obj(i);
    const v = verifyManifest(o.envelope, optionalStrings(o.stewards));
    return { address: v.address, document: v.document };
  },
  "manifest.satisfies": (i) => {
    const o = obj(i);
    const addr = typeof o.address === "string" ? (o.address as Manifest["address"]) : undefined;
    const r = satisfies(o.manifest as unknown as Manifest, o.offered as unknown as OfferedEnvironment, addr);
    return r.ok ? { ok: true } : { ok: false, code: r.code, pointers: r.mismatches.map((m) => m.pointer) };
  },
};

export const klass: ConformanceClass = {
  id: C,
  title: "environment manifests",
  file: "durable.json",
  ops,
  generate: () => [
    ...ingestVectors(),
    ...refusalVectors(),
    ...parseErrorVectors(),
    ...verifyVectors(),
    ...satisfyVectors(),
  ],
};
