// C7 ingestion vectors: accepted documents (outputs from the oracle, oracle/manifest.ts), refusals with the member
// lists written out here, and parse errors.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { toBase64, type Json } from "@sbx/wire";
import { manifestOutputOracle } from "../../oracle/manifest.ts";
import { errCase, okCase } from "../../generate/build.ts";
import { testdataDir } from "../../paths.ts";
import type { Vector } from "../../types.ts";
import { C, HEX, PIN } from "./common.ts";

const corpus = join(testdataDir, "corpus/devcontainer");

// The expected document comes from the independent oracle (oracle/manifest.ts), not from ingestManifest.
function ingestOk(id: string, desc: string, text: string): Vector {
  const input = { source: text };
  const out = manifestOutputOracle("manifest.ingest", input);
  if (out === undefined) throw new Error("c07: the manifest oracle has no manifest.ingest");
  return okCase(C, `c7-ingest-${id}`, desc, "manifest.ingest", input, out);
}

export const FULL = `// a declarative environment
{
  "name": "full", /* label only */
  "image": "registry.example/team/env:1.2@sha256:${HEX}",
  "workspaceFolder": "/src/app",
  "containerUser": "root", "remoteUser": "dev",
  "containerEnv": {"Z": "1", "BIN": "\${containerWorkspaceFolder}/bin", "GONE": "x",},
  "remoteEnv": {"GONE": null, "BASE": "\${containerWorkspaceFolderBasename}"},
  "hostRequirements": {"cpus": 4, "memory": "8gb", "storage": "32gb", "gpu": {"cores": 2}},
  "init": true, "overrideCommand": true,
  "forwardPorts": ["db:5432", 8080, 3000, 8080],
  "portsAttributes": {"3000": {"label": "web", "protocol": "https", "requireLocalPort": true}},
  "otherPortsAttributes": {"onAutoForward": "silent"},
  "customizations": {"vscode": {"extensions": ["x"]}}, "settings": {}, "userEnvProbe": "none",
}`;

function declarativeCorpus(): Vector[] {
  const files = readFileSync(join(corpus, "INDEX.tsv"), "utf8")
    .trim()
    .split("\n")
    .map((l) => l.split("\t"))
    .filter((c) => c[4] === "declarative")
    .map((c) => c[0] ?? "");
  return files.map((f) => {
    const text = readFileSync(join(corpus, f), "utf8").replace(
      /"image"\s*:\s*"([^"]*)"/,
      (_m, ref: string) => {
        const name = ref.replace(/\$\{templateOption:[^}]*\}/g, "").replace(/:[^/:]*$/, "");
        return `"image": "${name}@sha256:${HEX}"`;
      },
    );
    return ingestOk(
      `corpus-${f.replace(/__\.devcontainer__devcontainer\.json$/, "").replaceAll("__", "-")}`,
      `corpus file ${f}, image pinned`,
      text,
    );
  });
}

export function ingestVectors(): Vector[] {
  return [
    ingestOk(
      "minimal",
      "an image pinned by digest is the least accepted document; defaults explicit",
      `{"image": "${PIN}"}`,
    ),
    ingestOk(
      "full",
      "every kept member normalised; comments and trailing commas accepted; customizations ignored",
      FULL,
    ),
    ingestOk(
      "reordered",
      "the same environment, members reordered and reformatted: same address",
      `{"customizations":{},"image":"${PIN}",/*x*/"init":false,"workspaceFolder":"/workspace"}`,
    ),
    ingestOk("bom", "a leading byte-order mark is skipped", `\uFEFF{"image": "${PIN}"}`),
    ingestOk(
      "privileged-false",
      "privileged: false (the default) is accepted and dropped: the environment of the minimal document",
      `{"image": "${PIN}", "privileged": false}`,
    ),
    // §14.3 "Value forms": the forms the earlier text left open, each accepted where a narrower
    // reading would refuse it.
    ingestOk(
      "value-env-names",
      "variable names are any non-empty strings without = or NUL: a dash and a dot are accepted",
      `{"image": "${PIN}", "containerEnv": {"my-var.x": "1"}, "remoteEnv": {"a b": null}}`,
    ),
    ingestOk(
      "value-user-forms",
      "a user name may end in $ (a machine account); a numeric uid is a user",
      `{"image": "${PIN}", "containerUser": "1000", "remoteUser": "svc_1.x-y$"}`,
    ),
    ingestOk(
      "value-image-registry-case",
      "a registry host may hold capitals and a port; the path components are lowercase",
      `{"image": "Registry.Example:5000/team/a__b.c-d:v1.0_x@sha256:${HEX}"}`,
    ),
    ingestOk(
      "value-ports-key-any",
      "a portsAttributes key is any string; a forwarded host:port names a host of [A-Za-z0-9._-]",
      `{"image": "${PIN}", "forwardPorts": ["db.local_1:5432"], "portsAttributes": {"3000-3010": {"label": "range"}}}`,
    ),
    ...declarativeCorpus(),
  ];
}

// A refusal vector pair: the top-level code, and the exact member list written out here.
function refused(id: string, desc: string, doc: string, members: [string, string][]): Vector[] {
  const input = { source: doc };
  return [
    errCase(C, `c7-refuse-${id}`, desc, "manifest.ingest", input, "ManifestRefused"),
    okCase(C, `c7-refusals-${id}`, `${desc}: every member named`, "manifest.refusals", input, {
      code: "ManifestRefused",
      members: members.map(([pointer, code]) => ({ pointer, code })),
    }),
  ];
}

const MEMBER_CODES: [string, Json, string][] = [
  ["initializeCommand", "x", "LifecycleCommand"],
  ["onCreateCommand", "x", "LifecycleCommand"],
  ["updateContentCommand", "x", "LifecycleCommand"],
  ["postCreateCommand", ["make"], "LifecycleCommand"],
  ["postStartCommand", { a: "x" }, "LifecycleCommand"],
  ["postAttachCommand", "x", "LifecycleCommand"],
  ["waitFor", "onCreateCommand", "LifecycleCommand"],
  ["overrideCommand", false, "LifecycleCommand"],
  ["capAdd", ["SYS_ADMIN"], "PrivilegeWidening"],
  ["securityOpt", ["seccomp=unconfined"], "PrivilegeWidening"],
  ["runArgs", ["--network=host"], "PrivilegeWidening"],
  ["mounts", ["source=/,target=/host,type=bind"], "PrivilegeWidening"],
  ["workspaceMount", "source=/,target=/w,type=bind", "PrivilegeWidening"],
  ["appPort", [80], "PrivilegeWidening"],
  ["build", { dockerfile: "Dockerfile" }, "BuildOrCompose"],
  ["dockerFile", "Dockerfile", "BuildOrCompose"],
  ["context", "..", "BuildOrCompose"],
  ["dockerComposeFile", "compose.yml", "BuildOrCompose"],
  ["service", "app", "BuildOrCompose"],
  ["runServices", ["db"], "BuildOrCompose"],
  ["features", { "ghcr.io/x/y:1": {} }, "FeatureInstall"],
  ["overrideFeatureInstallOrder", ["ghcr.io/x/y"], "FeatureInstall"],
  ["additionalProperties", {}, "UnknownMember"],
  ["gpuRequirements", {}, "UnknownMember"],
];

const SUBSTITUTIONS: [string, string][] = [
  ["localEnv:HOME", "HostSubstitution"],
  ["env:HOME", "HostSubstitution"],
  ["localWorkspaceFolder", "HostSubstitution"],
  ["localWorkspaceFolderBasename", "HostSubstitution"],
  ["containerEnv:PATH", "UnknownSubstitution"],
  ["devcontainerId", "UnknownSubstitution"],
  ["templateOption:imageVariant", "UnknownSubstitution"],
  ["userHome", "UnknownSubstitution"],
];

export function refusalVectors(): Vector[] {
  const out: Vector[] = [];
  for (const [name, value, code] of MEMBER_CODES)
    out.push(
      ...refused(
        `member-${name}`,
        `${name} is outside the subset (${code})`,
        JSON.stringify({ image: PIN, [name]: value }),
        [[`/${name}`, code]],
      ),
    );
  // §14.3: privileged is refused only for what widens. true lifts the kernel's confinement; false is
  // the default (vector c7-ingest-privileged-false, and accepted below); anything else is no boolean.
  out.push(
    ...refused(
      "member-privileged",
      "privileged: true widens the sandbox's confinement (PrivilegeWidening)",
      JSON.stringify({ image: PIN, privileged: true }),
      [["/privileged", "PrivilegeWidening"]],
    ),
    ...refused(
      "privileged-not-boolean",
      'privileged: "no" is not a boolean (InvalidValue), not read as false',
      JSON.stringify({ image: PIN, privileged: "no" }),
      [["/privileged", "InvalidValue"]],
    ),
    okCase(
      C,
      "c7-refusals-privileged-false",
      "privileged: false narrows nothing: accepted, no members",
      "manifest.refusals",
      { source: JSON.stringify({ image: PIN, privileged: false }) },
      { code: "accepted", members: [] },
    ),
  );
  for (const [v, code] of SUBSTITUTIONS)
    out.push(
      ...refused(
        `subst-${v.replace(":", "-")}`,
        `\${${v}} in a kept value is ${code}`,
        JSON.stringify({ image: PIN, containerEnv: { X: `a-\${${v}}` } }),
        [["/containerEnv/X", code]],
      ),
    );
  const img: [string, string, [string, string][]][] = [
    ["missing", "{}", [["/image", "ImageMissing"]]],
    ["tag-only", `{"image": "ubuntu:22.04"}`, [["/image", "ImageNotPinned"]]],
    ["sha512", `{"image": "ubuntu@sha512:${HEX}${HEX}"}`, [["/image", "ImageNotPinned"]]],
    ["uppercase-hex", `{"image": "ubuntu@sha256:${HEX.toUpperCase()}"}`, [["/image", "ImageNotPinned"]]],
    [
      "template",
      `{"image": "mcr.microsoft.com/devcontainers/base:\${templateOption:imageVariant}"}`,
      [
        ["/image", "ImageNotPinned"],
        ["/image", "UnknownSubstitution"],
      ],
    ],
    ["bad-name", `{"image": "Bad Name@sha256:${HEX}"}`, [["/image", "InvalidValue"]]],
    // §14.3 "Value forms": the OCI reference grammar decides.
    ["double-dot", `{"image": "team/a..b@sha256:${HEX}"}`, [["/image", "InvalidValue"]]],
    ["leading-dash", `{"image": "team/-app@sha256:${HEX}"}`, [["/image", "InvalidValue"]]],
    ["tag-leading-dot", `{"image": "app:.v1@sha256:${HEX}"}`, [["/image", "InvalidValue"]]],
    ["tag-129", `{"image": "app:${"v".repeat(129)}@sha256:${HEX}"}`, [["/image", "InvalidValue"]]],
    ["over-512", `{"image": "${"a/".repeat(222)}app@sha256:${HEX}"}`, [["/image", "InvalidValue"]]],
  ];
  for (const [id, doc, members] of img) out.push(...refused(`image-${id}`, `image ${id}`, doc, members));
  const structure: [string, string, [string, string][]][] = [
    ["duplicate", `{"image": "${PIN}", "init": true, "init": false}`, [["/init", "DuplicateKey"]]],
    [
      "duplicate-escaped",
      `{"image": "${PIN}", "customizations": {"a": 1, "\\u0061": 2}}`,
      [["/customizations/a", "DuplicateKey"]],
    ],
    ["proto", `{"image": "${PIN}", "__proto__": {}}`, [["/__proto__", "ForbiddenKey"]]],
    [
      "constructor",
      `{"image": "${PIN}", "containerEnv": {"constructor": "x"}}`,
      [["/containerEnv/constructor", "ForbiddenKey"]],
    ],
    [
      "prototype",
      `{"image": "${PIN}", "customizations": {"prototype": 1}}`,
      [["/customizations/prototype", "ForbiddenKey"]],
    ],
    ["not-object", `["image"]`, [["", "NotAnObject"]]],
    [
      "elevate",
      `{"image": "${PIN}", "portsAttributes": {"80": {"elevateIfNeeded": true}}}`,
      [["/portsAttributes/80/elevateIfNeeded", "PrivilegeWidening"]],
    ],
    [
      "values",
      `{"image": "${PIN}", "workspaceFolder": "/a/../b", "remoteUser": "a b", "hostRequirements": {"cpus": 0, "memory": "4 GB"}, "forwardPorts": [70000]}`,
      [
        ["/forwardPorts/0", "InvalidValue"],
        ["/hostRequirements/cpus", "InvalidValue"],
        ["/hostRequirements/memory", "InvalidValue"],
        ["/remoteUser", "InvalidValue"],
        ["/workspaceFolder", "InvalidValue"],
      ],
    ],
    [
      "value-forms",
      `{"image": "${PIN}", "containerUser": "\${containerWorkspaceFolderBasename}", "remoteUser": "1abc", "containerEnv": {"A=B": "x", "": "y"}, "hostRequirements": {"memory": "4GB", "storage": "17179869184gb", "gpu": {"cores": 0}}, "forwardPorts": ["my host:80", "db:080000", 0]}`,
      [
        ["/containerEnv/", "InvalidValue"],
        ["/containerEnv/A=B", "InvalidValue"],
        ["/containerUser", "InvalidValue"],
        ["/forwardPorts/0", "InvalidValue"],
        ["/forwardPorts/1", "InvalidValue"],
        ["/forwardPorts/2", "InvalidValue"],
        ["/hostRequirements/gpu/cores", "InvalidValue"],
        ["/hostRequirements/memory", "InvalidValue"],
        ["/hostRequirements/storage", "InvalidValue"],
        ["/remoteUser", "InvalidValue"],
      ],
    ],
    [
      "workspace-substitution",
      `{"image": "${PIN}", "workspaceFolder": "/workspaces/\${localWorkspaceFolderBasename}"}`,
      [["/workspaceFolder", "HostSubstitution"]],
    ],
    [
      "all-at-once",
      `{"image": "node:20", "postCreateCommand": "x", "runArgs": [], "features": {}, "build": {}, "remoteEnv": {"P": "\${localEnv:P}"}, "extra": 1}`,
      [
        ["/build", "BuildOrCompose"],
        ["/extra", "UnknownMember"],
        ["/features", "FeatureInstall"],
        ["/image", "ImageNotPinned"],
        ["/postCreateCommand", "LifecycleCommand"],
        ["/remoteEnv/P", "HostSubstitution"],
        ["/runArgs", "PrivilegeWidening"],
      ],
    ],
  ];
  for (const [id, doc, members] of structure) out.push(...refused(id, `refused: ${id}`, doc, members));
  // §14.8: what manifest.refusals answers for an accepted source and for a parse error.
  out.push(
    okCase(
      C,
      "c7-refusals-accepted",
      "an accepted source: code accepted, no members",
      "manifest.refusals",
      { source: `{"image": "${PIN}"}` },
      { code: "accepted", members: [] },
    ),
    errCase(
      C,
      "c7-refusals-parse-error",
      "a syntax error: the op's error is ManifestParseError (its syntax errors are not compared)",
      "manifest.refusals",
      { source: `{"image": ` },
      "ManifestParseError",
    ),
    errCase(
      C,
      "c7-refusals-parse-too-deep",
      "nesting deeper than 64: ManifestParseError, TooDeep only a member of it",
      "manifest.refusals",
      { source: `{"image": "${PIN}", "customizations": ${"[".repeat(70)}${"]".repeat(70)}}` },
      "ManifestParseError",
    ),
  );
  return out;
}

export function parseErrorVectors(): Vector[] {
  const malformed = readFileSync(
    join(
      testdataDir,
      "corpus/devcontainer-malformed/microsoft__vscode__.devcontainer__devcontainer@01b97ab4c2d0.json",
    ),
    "utf8",
  );
  const bad: [string, Json][] = [
    ["missing-comma", { source: `{"image": "${PIN}" "init": true}` }],
    ["trailing-text", { source: `{"image": "${PIN}"} {"privileged": true}` }],
    ["text-before-brace", { source: malformed }],
    ["unterminated-string", { source: `{"image": "${PIN}` }],
    ["unterminated-comment", { source: `{"image": "${PIN}"} /* open` }],
    ["empty", { source: "" }],
    ["only-comment", { source: "// nothing\n" }],
    ["invalid-utf8", { source_b64: toBase64(new Uint8Array([0x7b, 0xff, 0x7d])) }],
    ["too-deep", { source: `{"customizations": ${"[".repeat(65)}${"]".repeat(65)}}` }],
  ];
  return bad.map(([id, input]) =>
    errCase(C, `c7-parse-${id}`, `parse error: ${id}`, "manifest.ingest", input, "ManifestParseError"),
  );
}
