// §14.2–§14.6 Ingestion: devcontainer.json bytes → the manifest document, or a refusal that names every
// offending member; and signing the document as the steward.
import { addressOf, digestBytes, signPayload, utf8, type Envelope, type KeyPair } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { buildEnvironment } from "./environment.ts";
import { pointerOf, readJsonc, type Offending } from "./jsonc.ts";
import { classifyMember } from "./subset.ts";
import { MANIFEST_PAYLOAD_TYPE, MANIFEST_TYPE, type Manifest } from "./types.ts";

/** sortRefusals orders refusals by pointer then code and drops repeats, so refusals compare stably, §14.8. */
export function sortRefusals(list: readonly Offending[]): Offending[] {
  const seen = new Set<string>();
  const out: Offending[] = [];
  for (const r of list) {
    const k = `${r.pointer}\u0000${r.code}`;
    if (!seen.has(k)) {
      seen.add(k);
      out.push(r);
    }
  }
  return out.sort((a, b) =>
    a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : a.code < b.code ? -1 : a.code > b.code ? 1 : 0,
  );
}

function describe(list: readonly Offending[]): string {
  return list.map((r) => `${r.pointer || "(root)"} ${r.code}`).join("; ");
}

/** refusal builds the error of a refused document or manifest, naming every member (§14.3). */
export function refusal(
  code: "ManifestParseError" | "ManifestRefused" | "BadManifest",
  list: readonly Offending[],
): SandboxAttestError {
  const members = code === "ManifestParseError" ? [...list] : sortRefusals(list);
  return new SandboxAttestError(code, `${members.length} offending member(s): ${describe(members)}`, {
    members,
  });
}

/**
 * ingestManifest reads devcontainer.json bytes (JSONC) and returns the manifest document (§14.5).
 * Throws SandboxAttestError `ManifestParseError` (every syntax error, each with its pointer and
 * offset) or `ManifestRefused` (every member outside the declarative subset, every bad value, every
 * duplicate or prototype-reaching key), with the list on `members`. Never throws anything else.
 */
export function ingestManifest(source: Uint8Array | string): Manifest {
  const bytes = typeof source === "string" ? utf8(source) : source;
  const read = readJsonc(bytes);
  if (read.syntax.length > 0) throw refusal("ManifestParseError", read.syntax);
  const out: Offending[] = [...read.structure];
  const doc = read.value;
  if (doc === null) throw refusal("ManifestRefused", out);
  const ignored: string[] = [];
  for (const k of Object.keys(doc)) {
    const c = classifyMember(k);
    if (c.kind === "ignored") ignored.push(pointerOf([k]));
    else if (c.kind === "refused") out.push({ pointer: pointerOf([k]), code: c.code });
  }
  const environment = buildEnvironment(doc, out);
  if (out.length > 0 || environment === null) throw refusal("ManifestRefused", out);
  return {
    type: MANIFEST_TYPE,
    address: addressOf(environment),
    name: typeof doc.name === "string" ? doc.name : null,
    environment,
    source: { digest: digestBytes(bytes), size: bytes.length },
    ignored: ignored.sort(),
  };
}

/** signManifest signs a manifest document in a DSSE envelope as `steward` (§14.6). */
export function signManifest(manifest: Manifest, steward: KeyPair): Envelope {
  return signPayload(MANIFEST_PAYLOAD_TYPE, manifest, steward);
}
