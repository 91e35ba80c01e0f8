// §14 against the corpus (testdata/corpus) of 72 real devcontainer.json files: every file gets the answer its
// README describes. The expected refusals come from INDEX.tsv's classification plus a hand-written
// table of what INDEX lists only in its notes (substitutions, `overrideCommand: false`); they are not
// computed by the implementation.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isSandboxAttestError } from "../../src/errors.ts";
import { ingestManifest } from "../../src/manifest/index.ts";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
const shared = join(repoRoot, "testdata");
const dir = join(shared, "corpus/devcontainer");
const malformedDir = join(shared, "corpus/devcontainer-malformed");

// Why each member outside the subset is refused: the spec's table (§14.3), written out again here.
const CODE: Record<string, string> = {
  initializeCommand: "LifecycleCommand",
  onCreateCommand: "LifecycleCommand",
  updateContentCommand: "LifecycleCommand",
  postCreateCommand: "LifecycleCommand",
  postStartCommand: "LifecycleCommand",
  postAttachCommand: "LifecycleCommand",
  waitFor: "LifecycleCommand",
  privileged: "PrivilegeWidening",
  capAdd: "PrivilegeWidening",
  securityOpt: "PrivilegeWidening",
  runArgs: "PrivilegeWidening",
  mounts: "PrivilegeWidening",
  appPort: "PrivilegeWidening",
  build: "BuildOrCompose",
  dockerFile: "BuildOrCompose",
  context: "BuildOrCompose",
  dockerComposeFile: "BuildOrCompose",
  service: "BuildOrCompose",
  features: "FeatureInstall",
  overrideFeatureInstallOrder: "FeatureInstall",
};

// Offending members INDEX.tsv mentions only in its notes, read off the files by hand.
const HOST_WS = "/workspaceFolder HostSubstitution";
const LOCAL_WS_ENV = "/remoteEnv/LOCAL_WORKSPACE_FOLDER HostSubstitution";
const OVERRIDE = "/overrideCommand LifecycleCommand";
const TEMPLATE_IMAGE = "/image UnknownSubstitution";
const EXTRA: Record<string, string[]> = {
  apache__superset: [HOST_WS],
  "devcontainers__templates__src__docker-existing-docker-compose": [HOST_WS],
  "devcontainers__templates__src__docker-outside-of-docker-compose": [HOST_WS, LOCAL_WS_ENV],
  // (their `${templateOption:…}` sit inside `features`, refused as a whole)
  "devcontainers__templates__src__docker-outside-of-docker__": [LOCAL_WS_ENV],
  "devcontainers__templates__src__go-postgres": [HOST_WS],
  "devcontainers__templates__src__ruby-rails-postgres": [HOST_WS],
  mastodon__mastodon: [HOST_WS],
  // remoteEnv PATH reads the container's environment: `${containerEnv:PATH}`.
  "dotnet__runtime__.devcontainer__devcontainer": ["/remoteEnv/PATH UnknownSubstitution"],
  "dotnet__runtime__.devcontainer__wasm": ["/remoteEnv/PATH UnknownSubstitution"],
  "microsoft__vscode-dev-containers__containers__codespaces-linux": [OVERRIDE],
  "microsoft__vscode-dev-containers__containers__docker-from-docker-compose": [LOCAL_WS_ENV],
  "microsoft__vscode-dev-containers__containers__docker-from-docker__": [OVERRIDE, LOCAL_WS_ENV],
  "microsoft__vscode-dev-containers__containers__docker-in-docker": [OVERRIDE],
  "microsoft__vscode-dev-containers__containers__kubernetes-helm-minikube": [OVERRIDE],
  "microsoft__vscode__.devcontainer": [OVERRIDE],
};
// The five declarative templates whose image carries `${templateOption:imageVariant}`.
for (const t of ["alpine", "javascript-node", "python", "rust", "ubuntu"])
  EXTRA[`devcontainers__templates__src__${t}__`] = [TEMPLATE_IMAGE];

interface Row {
  readonly file: string;
  readonly classification: string;
  readonly notes: string;
}

function rows(): Row[] {
  const lines = readFileSync(join(dir, "INDEX.tsv"), "utf8").trim().split("\n").slice(1);
  return lines.map((l) => {
    const [file = "", , , , classification = "", notes = ""] = l.split("\t");
    return { file, classification, notes };
  });
}

function expected(row: Row): string[] {
  const want = new Set<string>();
  if (row.classification !== "declarative")
    for (const item of row.classification.split("; ")) {
      const name = /^[A-Za-z]+/.exec(item)?.[0] ?? "";
      want.add(`/${name} ${CODE[name] ?? "?"}`);
    }
  want.add(row.notes.includes("image_tag_only") ? "/image ImageNotPinned" : "/image ImageMissing");
  for (const [prefix, extra] of Object.entries(EXTRA))
    if (row.file.startsWith(prefix)) for (const x of extra) want.add(x);
  return [...want].sort();
}

function refusalsOf(source: Uint8Array | string): { code: string; members: string[] } {
  try {
    ingestManifest(source);
  } catch (e) {
    assert.ok(isSandboxAttestError(e), String(e));
    return { code: e.code, members: e.members.map((m) => `${m.pointer} ${m.code}`).sort() };
  }
  return { code: "accepted", members: [] };
}

/** The test's own pinning: same name, any tag or `${templateOption:…}` replaced by a sha256 digest. */
function pinImage(text: string, hex: string): string {
  return text.replace(/"image"\s*:\s*"([^"]*)"/, (_m, ref: string) => {
    const name = ref.replace(/\$\{templateOption:[^}]*\}/g, "").replace(/:[^/:]*$/, "");
    return `"image": "${name}@sha256:${hex}"`;
  });
}

test("corpus: 72 files, 10 declarative, INDEX agrees with the folder", () => {
  const all = rows();
  assert.equal(all.length, 72);
  assert.deepEqual(
    all.map((r) => r.file).sort(),
    readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .sort(),
  );
  assert.equal(all.filter((r) => r.classification === "declarative").length, 10);
});

test("corpus: every file as written is refused, naming every offending member", () => {
  for (const row of rows()) {
    const got = refusalsOf(readFileSync(join(dir, row.file)));
    assert.equal(got.code, "ManifestRefused", row.file);
    assert.deepEqual(got.members, expected(row), row.file);
  }
});

test("corpus: trailing commas (mastodon, dotnet/runtime) are accepted as JSONC (§14.2), so their members are named", () => {
  const withCommas = rows().filter((r) => r.notes.includes("trailing_commas"));
  assert.deepEqual(withCommas.map((r) => r.file.split("__")[0]).sort(), ["dotnet", "mastodon"]);
  for (const row of withCommas) {
    const got = refusalsOf(readFileSync(join(dir, row.file)));
    assert.equal(got.code, "ManifestRefused", `${row.file}: not a parse error`);
    assert.ok(
      got.members.some((m) => m.includes("LifecycleCommand")),
      row.file,
    );
  }
});

test("corpus: the ten declarative files, image pinned by the test, are accepted with customizations ignored", () => {
  const hex = "0123456789abcdef".repeat(4);
  for (const row of rows().filter((r) => r.classification === "declarative")) {
    const text = pinImage(readFileSync(join(dir, row.file), "utf8"), hex);
    const m = ingestManifest(text);
    assert.match(
      m.environment.image,
      new RegExp(`^mcr\\.microsoft\\.com/devcontainers/[a-z-]+@sha256:${hex}$`),
      row.file,
    );
    const hasCustomizations = row.notes.includes("customizations=");
    assert.deepEqual(m.ignored, hasCustomizations ? ["/customizations"] : [], row.file);
    assert.equal(m.environment.workspace_folder, "/workspace", row.file);
    assert.equal(
      JSON.stringify(m.environment).includes("vscode"),
      false,
      `${row.file}: customizations stay out of the environment`,
    );
  }
});

test("corpus: the malformed file (text before the opening brace) is a parse error", () => {
  const files = readdirSync(malformedDir).filter((f) => f.endsWith(".json"));
  assert.equal(files.length, 1);
  for (const f of files) {
    const got = refusalsOf(readFileSync(join(malformedDir, f)));
    assert.equal(got.code, "ManifestParseError", f);
    assert.ok(got.members.length >= 1, f);
  }
});
