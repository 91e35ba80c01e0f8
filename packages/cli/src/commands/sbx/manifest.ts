// `sbx manifest ingest` and `sbx manifest verify` (sandbox-attest §14): devcontainer.json → a signed,
// content-addressed environment manifest, and its verification.
import { isWireError } from "@sbx/wire";
import {
  ingestManifest,
  isSandboxAttestError,
  signManifest,
  verifyManifest,
  type Manifest,
  type SandboxAttestError,
} from "@sbx/sandbox-attest/manifest";
import { EXIT, parseOptions, printJson, UsageError, type Command, type Io } from "../../command.ts";
import { readKey } from "@sbx/host/keys";
import { MAX_JSON_BYTES, readInput, readJsonInput, writeJsonOutput } from "@sbx/host/files";
import { TRUST_HELP, TRUST_OPTIONS, trustOf, verdict } from "../../trust.ts";

// line:column (1-based) of a syntax error's offset, from the offsets where lines start (one pass over
// the source, then a binary search per member: many members of a large file stay linear).
function lineColumn(starts: readonly number[] | undefined, offset: unknown): string {
  if (starts === undefined || typeof offset !== "number") return "";
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return ` at ${lo + 1}:${offset - starts[lo]! + 1}`;
}

function lineStarts(source: string): number[] {
  const starts = [0];
  for (let i = source.indexOf("\n"); i >= 0; i = source.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

// Prints every offending member of a refusal, one per line; returns the exit code.
function printRefusal(e: SandboxAttestError, json: boolean, io: Io, source?: string): number {
  if (json) printJson(io, { ok: false, code: e.code, members: e.members });
  else {
    const starts = source === undefined ? undefined : lineStarts(source);
    io.err(`refused: ${e.code}, ${e.members.length} offending member(s)`);
    for (const m of e.members)
      io.err(
        `  ${(m.pointer || "(root)").padEnd(40)} ${m.code}${lineColumn(starts, (m as { offset?: unknown }).offset)}`,
      );
  }
  return e.code === "ManifestParseError" ? EXIT.usage : EXIT.invalid;
}

function printAccepted(m: Manifest, extra: Record<string, unknown>, json: boolean, io: Io): void {
  if (json)
    printJson(io, { ok: true, address: m.address, ...extra, image: m.environment.image, ignored: m.ignored });
  else {
    io.out(m.address);
    for (const p of m.ignored) io.err(`  ignored ${p} (does not configure the sandbox)`);
  }
}

const ingest: Command = {
  name: "manifest ingest",
  summary: "ingest a devcontainer.json into a signed environment manifest and print its address",
  help: `usage: sbx manifest ingest <devcontainer.json> --key KEYFILE [--out FILE] [--json]
  Reads devcontainer.json (JSONC: comments and trailing commas allowed), accepts only the declarative
  subset of sandbox-attest §14, signs the manifest with the steward's key as a DSSE envelope and writes
  it to FILE (default manifest.dsse.json). Prints the manifest address (the environment's content
  address) and lists ignored members (customizations) on stderr. A refusal lists every offending
  member by JSON pointer with its code.
  --key KEYFILE  the steward's key file (sbx keygen)
  --out FILE     where to write the signed manifest (default manifest.dsse.json)
  --json         print {ok, address, document, out, image, ignored} or {ok:false, code, members}
exit: 0 written, 1 refused (members outside the subset), 2 usage error, unreadable file or parse error`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      key: { type: "string" },
      out: { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length !== 1) throw new UsageError("exactly one devcontainer.json is required");
    if (!values.key) throw new UsageError("--key KEYFILE is required");
    const key = readKey(values.key);
    const source = readInput(positionals[0]!, "devcontainer.json", MAX_JSON_BYTES);
    let manifest: Manifest;
    try {
      manifest = ingestManifest(source);
    } catch (e) {
      if (isSandboxAttestError(e))
        return Promise.resolve(
          printRefusal(e, values.json ?? false, io, source.toString("utf8").replace(/^\uFEFF/, "")),
        );
      throw e;
    }
    const out = values.out ?? "manifest.dsse.json";
    const envelope = signManifest(manifest, key);
    writeJsonOutput(out, envelope, { what: "signed manifest" });
    printAccepted(manifest, { out, signer: key.did }, values.json ?? false, io);
    return Promise.resolve(EXIT.ok);
  },
};

const verify: Command = {
  name: "manifest verify",
  summary: "verify a signed environment manifest (signature, canonical form, declarative subset)",
  help: `usage: sbx manifest verify <manifest.dsse.json> (--trust FILE|DID… | --any-signer) [--json]
  Checks the DSSE signature (by a trusted steward), that the payload is canonical (RFC 8785), and
  that the manifest holds nothing outside the declarative subset of sandbox-attest §14, in normal
  form, with the address of its environment. Prints the manifest address, and the verdict on stderr:
  VALID, or UNTRUSTED with --any-signer, naming the signers. A file above 16 MiB is refused before
  it is read (§2.9).
${TRUST_HELP}
  --steward DID  the same as --trust (older name)
  --json         print {ok, trusted, address, document, signers, image, ignored} or {ok:false, code, members}
exit: 0 valid (or UNTRUSTED with --any-signer), 1 invalid (bad signature, untrusted signer, not
      canonical, outside the subset), 2 usage error (no --trust), unreadable file or not JSON`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      steward: { type: "string", multiple: true },
      json: { type: "boolean" },
      ...TRUST_OPTIONS,
    });
    if (positionals.length !== 1) throw new UsageError("exactly one manifest file is required");
    const trust = trustOf(values, values.steward);
    const envelope = readJsonInput(positionals[0]!, "signed manifest");
    const json = values.json ?? false;
    try {
      const v = verifyManifest(envelope, trust.keys ?? undefined);
      const trusted = trust.keys !== null;
      printAccepted(v.manifest, { trusted, document: v.document, signers: v.signers }, json, io);
      if (!json) io.err(`verdict: ${verdict(trust)}, signed by ${v.signers.join(", ")}`);
      return Promise.resolve(EXIT.ok);
    } catch (e) {
      if (isSandboxAttestError(e)) {
        printRefusal(e, json, io);
        return Promise.resolve(EXIT.invalid);
      }
      if (json && isWireError(e)) {
        printJson(io, { ok: false, code: e.code, members: [] });
        return Promise.resolve(EXIT.invalid);
      }
      throw e;
    }
  },
};

export const commands: Command[] = [ingest, verify];
