// §14.2–§14.5 ingestion: parse errors, structure, every refused member class, normalisation.
import { test } from "node:test";
import assert from "node:assert/strict";
import { addressOf, digestBytes, utf8 } from "@sbx/wire";
import { isSandboxAttestError } from "../../src/errors.ts";
import { ingestManifest, MAX_DEPTH, MAX_SOURCE_BYTES, type Manifest } from "../../src/manifest/index.ts";

const PIN = `example.org/team/img@sha256:${"a".repeat(64)}`;

function refusal(text: string | Uint8Array): { code: string; members: string[] } {
  try {
    ingestManifest(text);
  } catch (e) {
    assert.ok(isSandboxAttestError(e), String(e));
    return { code: e.code, members: e.members.map((m) => `${m.pointer} ${m.code}`) };
  }
  assert.fail("expected a refusal");
}

function ok(doc: string): Manifest {
  return ingestManifest(doc);
}

test("parse: every syntax error is reported, not just the first", () => {
  const r = refusal(`{"image": "${PIN}" "name": "x" "init": true}`);
  assert.equal(r.code, "ManifestParseError");
  assert.equal(r.members.filter((m) => m.endsWith("CommaExpected")).length, 2);
});

test("parse: trailing text after the document is refused (devcontainers CLI accepts it silently)", () => {
  const r = refusal(`{"image": "${PIN}"} {"privileged": true}`);
  assert.equal(r.code, "ManifestParseError");
  assert.ok(r.members.some((m) => m.endsWith("EndOfFileExpected")));
});

test("parse: text before the opening brace, unterminated strings and comments, empty input", () => {
  for (const text of [
    `"x": {} {"image": "${PIN}"}`,
    `{"image": "${PIN}`,
    `{"image": "${PIN}" /* open`,
    "",
    "   // only a comment\n",
  ]) {
    assert.equal(refusal(text).code, "ManifestParseError", JSON.stringify(text));
  }
});

test("parse: invalid UTF-8 and oversize input are parse errors; deep nesting is refused before parsing", () => {
  assert.deepEqual(refusal(new Uint8Array([0x7b, 0xff, 0x7d])), {
    code: "ManifestParseError",
    members: [" InvalidUtf8"],
  });
  assert.deepEqual(refusal(new Uint8Array(MAX_SOURCE_BYTES + 1).fill(0x20)), {
    code: "ManifestParseError",
    members: [" OversizeInput"],
  });
  const deep = `{"customizations": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
  assert.deepEqual(refusal(deep), { code: "ManifestParseError", members: [" TooDeep"] });
  const justDeepEnough = `{"image": "${PIN}", "customizations": ${"[".repeat(MAX_DEPTH - 1)}${"]".repeat(MAX_DEPTH - 1)}}`;
  assert.deepEqual(ok(justDeepEnough).ignored, ["/customizations"]);
});

test("parse: comments and trailing commas are JSONC and accepted (§14.2)", () => {
  const m = ok(
    `// c\n{ /* c */ "image": "${PIN}", "forwardPorts": [3000, 3001,], "containerEnv": {"A": "1",}, }`,
  );
  assert.deepEqual(m.environment.forward_ports, [3000, 3001]);
  assert.deepEqual({ ...m.environment.env }, { A: "1" });
});

test("parse: a leading byte-order mark is skipped; the digest is of the bytes as given", () => {
  const bytes = utf8(`\uFEFF{"image": "${PIN}"}`);
  const m = ingestManifest(bytes);
  assert.equal(m.source.digest, digestBytes(bytes));
  assert.equal(m.source.size, bytes.length);
});

test("structure: duplicate keys are refused, anywhere, escaped or not", () => {
  const r = refusal(
    `{"image": "${PIN}", "customizations": {"a": 1, "\\u0061": 2}, "init": true, "init": false}`,
  );
  assert.deepEqual(r, {
    code: "ManifestRefused",
    members: ["/customizations/a DuplicateKey", "/init DuplicateKey"],
  });
});

test("structure: __proto__, constructor and prototype are refused anywhere", () => {
  const r = refusal(
    `{"image": "${PIN}", "__proto__": {"x": 1}, "containerEnv": {"constructor": "1"}, "customizations": {"prototype": 1}}`,
  );
  assert.deepEqual(r.members, [
    "/__proto__ ForbiddenKey",
    "/containerEnv/constructor ForbiddenKey",
    "/customizations/prototype ForbiddenKey",
  ]);
});

test("structure: objects are built without prototypes; a non-object root is refused", () => {
  const m = ok(`{"image": "${PIN}", "containerEnv": {"toString": "x"}}`);
  assert.equal(Object.getPrototypeOf(m.environment.env), null);
  assert.deepEqual(Object.entries(m.environment.env), [["toString", "x"]]);
  assert.deepEqual(refusal(`["image"]`), { code: "ManifestRefused", members: [" NotAnObject"] });
});

test("refused: every member class, all at once, each with its code and pointer", () => {
  const doc = {
    image: "ubuntu:22.04",
    initializeCommand: "x",
    onCreateCommand: "x",
    updateContentCommand: "x",
    postCreateCommand: "x",
    postStartCommand: "x",
    postAttachCommand: "x",
    waitFor: "postCreateCommand",
    privileged: true,
    capAdd: ["SYS_PTRACE"],
    securityOpt: ["seccomp=unconfined"],
    runArgs: ["--net=host"],
    mounts: ["source=/,target=/host,type=bind"],
    workspaceMount: "source=/,target=/w,type=bind",
    appPort: [80],
    portsAttributes: { "80": { elevateIfNeeded: true }, "81": { elevateIfNeeded: false } },
    build: { dockerfile: "Dockerfile" },
    dockerFile: "Dockerfile",
    context: "..",
    dockerComposeFile: "compose.yml",
    service: "app",
    runServices: ["db"],
    features: { "ghcr.io/x/y:1": {} },
    overrideFeatureInstallOrder: ["ghcr.io/x/y"],
    additionalProperties: {},
    somethingNew: 1,
    remoteEnv: {
      A: "${localEnv:HOME}",
      B: "${env:HOME}",
      C: "${localWorkspaceFolder}",
      D: "${devcontainerId}",
      E: "${containerEnv:PATH}",
      F: "${templateOption:x}",
    },
    containerEnv: { G: "${localWorkspaceFolderBasename}" },
  };
  const r = refusal(JSON.stringify(doc));
  assert.equal(r.code, "ManifestRefused");
  const want = [
    "/additionalProperties UnknownMember",
    "/appPort PrivilegeWidening",
    "/build BuildOrCompose",
    "/capAdd PrivilegeWidening",
    "/containerEnv/G HostSubstitution",
    "/context BuildOrCompose",
    "/dockerComposeFile BuildOrCompose",
    "/dockerFile BuildOrCompose",
    "/features FeatureInstall",
    "/image ImageNotPinned",
    "/initializeCommand LifecycleCommand",
    "/mounts PrivilegeWidening",
    "/onCreateCommand LifecycleCommand",
    "/overrideFeatureInstallOrder FeatureInstall",
    "/portsAttributes/80/elevateIfNeeded PrivilegeWidening",
    "/postAttachCommand LifecycleCommand",
    "/postCreateCommand LifecycleCommand",
    "/postStartCommand LifecycleCommand",
    "/privileged PrivilegeWidening",
    "/remoteEnv/A HostSubstitution",
    "/remoteEnv/B HostSubstitution",
    "/remoteEnv/C HostSubstitution",
    "/remoteEnv/D UnknownSubstitution",
    "/remoteEnv/E UnknownSubstitution",
    "/remoteEnv/F UnknownSubstitution",
    "/runArgs PrivilegeWidening",
    "/runServices BuildOrCompose",
    "/securityOpt PrivilegeWidening",
    "/service BuildOrCompose",
    "/somethingNew UnknownMember",
    "/updateContentCommand LifecycleCommand",
    "/waitFor LifecycleCommand",
    "/workspaceMount PrivilegeWidening",
  ];
  assert.deepEqual(r.members, want);
});

test("privileged: false (the default) is accepted and dropped; true widens; any other value is InvalidValue", () => {
  const plain = ok(`{"image": "${PIN}"}`);
  const off = ok(`{"image": "${PIN}", "privileged": false}`);
  // Dropped: the same environment, so the same address; nothing listed as ignored.
  assert.deepEqual(off.environment, plain.environment);
  assert.equal(off.address, plain.address);
  assert.deepEqual(off.ignored, []);
  assert.deepEqual(refusal(`{"image": "${PIN}", "privileged": true}`).members, [
    "/privileged PrivilegeWidening",
  ]);
  for (const v of [`"no"`, `"false"`, "0", "null", "[]", "{}"])
    assert.deepEqual(
      refusal(`{"image": "${PIN}", "privileged": ${v}}`).members,
      ["/privileged InvalidValue"],
      v,
    );
});

test("refused: image absent, unpinned, pinned by another algorithm, or not a reference", () => {
  assert.deepEqual(refusal("{}").members, ["/image ImageMissing"]);
  assert.deepEqual(refusal(`{"image": "ubuntu@sha512:${"a".repeat(128)}"}`).members, [
    "/image ImageNotPinned",
  ]);
  assert.deepEqual(refusal(`{"image": "example.org/Team@sha256:${"a".repeat(64)}"}`).members, [
    "/image InvalidValue",
  ]);
  assert.deepEqual(refusal(`{"image": "ubuntu@sha256:${"A".repeat(64)}"}`).members, [
    "/image ImageNotPinned",
  ]);
  assert.deepEqual(refusal(`{"image": 7}`).members, ["/image InvalidValue"]);
});

test("refused: bad values of kept members are named at their own pointer", () => {
  const r = refusal(
    JSON.stringify({
      image: PIN,
      workspaceFolder: "relative/path",
      remoteUser: "bad user",
      hostRequirements: { cpus: 0, memory: "4 GB", gpu: { cores: 1, vram: 1 } },
      forwardPorts: [0, "db:5432", 70000],
      portsAttributes: { "3000": { onAutoForward: "explode" } },
      init: "yes",
      overrideCommand: false,
    }),
  );
  assert.deepEqual(r.members, [
    "/forwardPorts/0 InvalidValue",
    "/forwardPorts/2 InvalidValue",
    "/hostRequirements/cpus InvalidValue",
    "/hostRequirements/gpu/vram UnknownMember",
    "/hostRequirements/memory InvalidValue",
    "/init InvalidValue",
    "/overrideCommand LifecycleCommand",
    "/portsAttributes/3000/onAutoForward InvalidValue",
    "/remoteUser InvalidValue",
    "/workspaceFolder InvalidValue",
  ]);
});

test("normalised: defaults explicit, env merged and sorted, tag dropped, substitutions resolved", () => {
  const m = ok(
    JSON.stringify({
      name: "demo",
      image: `example.org:5000/team/img:1.2@sha256:${"b".repeat(64)}`,
      workspaceFolder: "/src/app",
      containerUser: "root",
      remoteUser: "dev",
      containerEnv: { Z: "1", A: "${containerWorkspaceFolder}/bin", GONE: "x" },
      remoteEnv: { GONE: null, B: "${containerWorkspaceFolderBasename}" },
      hostRequirements: { cpus: 4, memory: "8gb", storage: "1tb", gpu: "optional" },
      forwardPorts: ["db:5432", 8080, 3000, 8080],
      portsAttributes: { "3000": { label: "web", protocol: "https" } },
      customizations: { vscode: { extensions: ["x"] } },
      settings: {},
      shutdownAction: "none",
    }),
  );
  assert.equal(m.name, "demo");
  assert.deepEqual(m.ignored, ["/customizations", "/settings", "/shutdownAction"]);
  const e = m.environment;
  assert.equal(e.image, `example.org:5000/team/img@sha256:${"b".repeat(64)}`);
  assert.deepEqual(Object.keys(e.env).sort(), ["A", "B", "GONE", "Z"]);
  assert.deepEqual({ ...e.env }, { Z: "1", A: "/src/app/bin", GONE: null, B: "app" });
  assert.equal(e.user, "dev");
  assert.deepEqual(e.host_requirements, {
    cpus: 4,
    memory_bytes: String(8 * 2 ** 30),
    storage_bytes: String(2 ** 40),
    gpu: { mode: "optional", cores: 0, memory_bytes: "0" },
  });
  assert.deepEqual(e.forward_ports, [3000, 8080, "db:5432"]);
  assert.deepEqual(
    { ...e.ports_attributes["3000"] },
    { label: "web", protocol: "https", on_auto_forward: "notify", require_local_port: false },
  );
  assert.equal(e.init, false);
  assert.equal(e.other_ports_attributes, null);
  assert.equal(m.address, addressOf(e));
});

test("address: the name label and ignored members do not change it; the environment does", () => {
  const a = ok(`{"image": "${PIN}"}`);
  const b = ok(`{"name": "other", "image": "${PIN}", "customizations": {"x": 1}}`);
  const c = ok(`{"image": "${PIN}", "init": true}`);
  assert.equal(a.address, b.address);
  assert.notEqual(a.source.digest, b.source.digest);
  assert.notEqual(a.address, c.address);
  assert.equal(ok(`{"image": "${PIN}", "workspaceFolder": "/workspace", "init": false}`).address, a.address);
});
