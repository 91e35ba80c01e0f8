// `sbx manifest ingest` and `sbx manifest verify` (sandbox-attest §14): devcontainer.json → a signed,
// content-addressed environment manifest, and its verification.
import { readFileSync } from "node:fs";
import { writeFileDurably } from "@sbx/host/store";
import {
  ingestManifest,
  isSandboxAttestError,
  signManifest,
  verifyManifest,
  type Manifest,
  type SandboxAttestError,
} from "@sbx/sandbox-attest/manifest";
import { EXIT, parseOptions, printJson, UsageError, type Command, type Io } from "../../command.ts";
import { readKey } from "../../keyfile.ts";

function readInput(path: string | undefined): Buffer {
  if (path === undefined) throw new UsageError("a file argument is required");
  try {
    return readFileSync(path);
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${(e as Error).message}`);
  }
}

// line:column (1-based) of a syntax error's offset in the source text.
function lineColumn(source: string | undefined, offset: unknown): string {
  if (source === undefined || typeof offset !== "number") return "";
  const before = source.slice(0, offset).split("\n");
  return ` at ${before.length}:${(before.at(-1)?.length ?? 0) + 1}`;
}

// Prints every offending member of a refusal, one per line; returns the exit code.
function printRefusal(e: SandboxAttestError, json: boolean, io: Io, source?: string): number {
  if (json) printJson(io, { ok: false, code: e.code, members: e.members });
  else {
    io.err(`refused: ${e.code}, ${e.members.length} offending member(s)`);
    for (const m of e.members)
      io.err(
        `  ${(m.pointer || "(root)").padEnd(40)} ${m.code}${lineColumn(source, (m as { offset?: unknown }).offset)}`,
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
    const source = readInput(positionals[0]);
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
    writeFileDurably(out, JSON.stringify(envelope, null, 2) + "\n");
    printAccepted(manifest, { out, signer: key.did }, values.json ?? false, io);
    return Promise.resolve(EXIT.ok);
  },
};

const verify: Command = {
  name: "manifest verify",
  summary: "verify a signed environment manifest (signature, canonical form, declarative subset)",
  help: `usage: sbx manifest verify <manifest.dsse.json> [--steward DID]… [--json]
  Checks the DSSE signature, that the payload is canonical (RFC 8785), and that the manifest holds
  nothing outside the declarative subset of sandbox-attest §14, in normal form, with the address of
  its environment. Prints the manifest address.
  --steward DID  require a valid signature by this did:key (repeatable: any one of them)
  --json         print {ok, address, document, signers, image, ignored} or {ok:false, code, members}
exit: 0 valid, 1 invalid (bad signature, not canonical, outside the subset), 2 usage or unreadable file`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      steward: { type: "string", multiple: true },
      json: { type: "boolean" },
    });
    if (positionals.length !== 1) throw new UsageError("exactly one manifest file is required");
    let envelope: unknown;
    try {
      envelope = JSON.parse(readInput(positionals[0]).toString("utf8"));
    } catch (e) {
      throw e instanceof UsageError ? e : new UsageError(`${positionals[0]} is not JSON`);
    }
    const json = values.json ?? false;
    try {
      const v = verifyManifest(envelope, values.steward);
      printAccepted(v.manifest, { document: v.document, signers: v.signers }, json, io);
      return Promise.resolve(EXIT.ok);
    } catch (e) {
      if (isSandboxAttestError(e)) {
        printRefusal(e, json, io);
        return Promise.resolve(EXIT.invalid);
      }
      const code = (e as { code?: unknown }).code;
      if (json && typeof code === "string") {
        printJson(io, { ok: false, code, members: [] });
        return Promise.resolve(EXIT.invalid);
      }
      throw e;
    }
  },
};

export const commands: Command[] = [ingest, verify];
