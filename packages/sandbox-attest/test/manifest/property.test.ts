// §14 properties: random JSONC never crashes the ingester (only coded refusals); an accepted document
// re-ingested from its own manifest has the same address; member order, whitespace, comments and
// trailing commas never change the address (nor which members a refusal names).
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { canonicalize, type Json } from "@sbx/wire";
import { isSandboxAttestError } from "../../src/errors.ts";
import { devcontainerOf, ingestManifest } from "../../src/manifest/index.ts";

const HEX = "0123456789abcdef".split("");
const sha = fc.string({ unit: fc.constantFrom(...HEX), minLength: 64, maxLength: 64 });
const image = fc
  .tuple(
    fc.constantFrom(
      "ubuntu",
      "example.org/team/img",
      "localhost:5000/a/b",
      "mcr.microsoft.com/devcontainers/go",
    ),
    fc.constantFrom("", ":1.2", ":latest"),
    sha,
  )
  .map(([n, t, h]) => `${n}${t}@sha256:${h}`);
const plain = fc.string({ maxLength: 12 }).filter((s) => !s.includes("${") && !s.includes("\0"));
const envValue = fc.oneof(
  plain,
  fc.constant("${containerWorkspaceFolder}/bin"),
  fc.constant("x-${containerWorkspaceFolderBasename}"),
);
const envName = fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,6}$/);
const user = fc.stringMatching(/^[a-z_][a-z0-9_-]{0,8}$/);
const segment = fc.stringMatching(/^[a-z0-9._-]{1,6}$/).filter((s) => s !== "." && s !== "..");
const folder = fc.array(segment, { maxLength: 3 }).map((p) => "/" + p.join("/"));
const bytes = fc.oneof(
  fc.nat({ max: 1e6 }).map(String),
  fc.tuple(fc.nat({ max: 64 }), fc.constantFrom("kb", "mb", "gb", "tb")).map(([n, u]) => `${n}${u}`),
);
const gpu = fc.oneof(
  fc.boolean(),
  fc.constant("optional"),
  fc.record({ cores: fc.integer({ min: 1, max: 99 }), memory: bytes }, { requiredKeys: [] }),
);
const port = fc.oneof(fc.integer({ min: 1, max: 65535 }), fc.constantFrom("db:5432", "cache:6379"));
const attrs = fc.record(
  {
    label: plain,
    protocol: fc.constantFrom("http", "https"),
    onAutoForward: fc.constantFrom(
      "notify",
      "openBrowser",
      "openBrowserOnce",
      "openPreview",
      "silent",
      "ignore",
    ),
    requireLocalPort: fc.boolean(),
    elevateIfNeeded: fc.constant(false),
  },
  { requiredKeys: [] },
);
const FORBIDDEN = /"(__proto__|constructor|prototype)"\s*:/;
const ignorable = fc.jsonValue({ maxDepth: 3 }).filter((v) => !FORBIDDEN.test(JSON.stringify(v)));

/** A devcontainer.json inside the declarative subset. */
const subsetDoc = fc.record(
  {
    name: plain,
    image,
    containerEnv: fc.dictionary(envName, envValue, { maxKeys: 4 }),
    remoteEnv: fc.dictionary(envName, fc.option(envValue), { maxKeys: 3 }),
    containerUser: user,
    remoteUser: user,
    workspaceFolder: folder,
    hostRequirements: fc.record(
      { cpus: fc.integer({ min: 1, max: 64 }), memory: bytes, storage: bytes, gpu },
      { requiredKeys: [] },
    ),
    init: fc.boolean(),
    overrideCommand: fc.constant(true),
    forwardPorts: fc.array(port, { maxLength: 4 }),
    portsAttributes: fc.dictionary(fc.integer({ min: 1, max: 65535 }).map(String), attrs, { maxKeys: 3 }),
    otherPortsAttributes: attrs,
    customizations: ignorable,
    shutdownAction: fc.constantFrom("none", "stopContainer"),
  },
  { requiredKeys: ["image"] },
);

/** A small PRNG, so one integer drives every layout choice. */
function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const GAPS = ["", " ", "\n", "\t  ", " /* c */ ", "// line\n", "\r\n"];

/** printJsonc writes a value as JSONC with shuffled members, random whitespace, comments and trailing commas. */
function printJsonc(v: unknown, rnd: () => number): string {
  const gap = () => GAPS[Math.floor(rnd() * GAPS.length)] ?? "";
  const list = (items: string[], open: string, close: string) =>
    `${open}${gap()}${items.join(`${gap()},${gap()}`)}${items.length && rnd() < 0.3 ? "," : ""}${gap()}${close}`;
  if (Array.isArray(v))
    return list(
      v.map((x) => printJsonc(x, rnd)),
      "[",
      "]",
    );
  if (v !== null && typeof v === "object") {
    const keys = Object.keys(v).sort(() => rnd() - 0.5);
    return list(
      keys.map(
        (k) => `${JSON.stringify(k)}${gap()}:${gap()}${printJsonc((v as Record<string, unknown>)[k], rnd)}`,
      ),
      "{",
      "}",
    );
  }
  return JSON.stringify(v);
}

/** outcome is the address of an accepted document, or the code and members of a refusal. */
function outcome(text: string): string {
  try {
    return ingestManifest(text).address;
  } catch (e) {
    assert.ok(isSandboxAttestError(e), `not a coded refusal: ${String(e)}`);
    assert.ok(e.code === "ManifestParseError" || e.code === "ManifestRefused", e.code);
    assert.ok(e.members.length > 0, "a refusal names at least one member");
    return `${e.code} ${e.members.map((m) => `${m.pointer} ${m.code}`).join(",")}`;
  }
}

const TOKENS = [
  "{",
  "}",
  "[",
  "]",
  ":",
  ",",
  " ",
  "\n",
  "//c\n",
  "/*",
  "*/",
  "1",
  "-0",
  "1e999",
  "0.5",
  "true",
  "null",
  '"',
  '"image"',
  '"a"',
  '"${localEnv:X}"',
  '"\\ud800"',
  '"\\u0000"',
];
const KEYS = [
  "__proto__",
  "constructor",
  "customizations",
  "containerEnv",
  "hostRequirements",
  "forwardPorts",
  "portsAttributes",
  "gpu",
  "cpus",
  "postCreateCommand",
];
const tokenSoup = fc
  .array(fc.constantFrom(...TOKENS, ...KEYS.map((k) => `"${k}"`), `"ubuntu@sha256:${"a".repeat(64)}"`), {
    maxLength: 60,
  })
  .map((t) => t.join(""));

test("property: random JSONC token soup never crashes the ingester", () => {
  fc.assert(
    fc.property(tokenSoup, (text) => void outcome(text)),
    { numRuns: 400 },
  );
});

test("property: random edits of accepted documents never crash the ingester", () => {
  const edited = fc.tuple(
    subsetDoc,
    fc.integer(),
    fc.array(fc.tuple(fc.nat(), fc.nat({ max: 3 }), fc.constantFrom(...TOKENS)), {
      minLength: 1,
      maxLength: 4,
    }),
  );
  fc.assert(
    fc.property(edited, ([doc, seed, edits]) => {
      let text = printJsonc(doc, prng(seed));
      for (const [at, del, ins] of edits) {
        const i = at % (text.length + 1);
        text = text.slice(0, i) + ins + text.slice(i + del);
      }
      void outcome(text);
    }),
    { numRuns: 300 },
  );
});

test("property: random JSON values at the top level never crash the ingester", () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => void outcome(JSON.stringify(v))),
    { numRuns: 300 },
  );
});

test("property: documents in the subset are accepted, and re-ingesting the manifest gives the same address", () => {
  fc.assert(
    fc.property(subsetDoc, (doc) => {
      const m = ingestManifest(JSON.stringify(doc));
      const again = ingestManifest(JSON.stringify(devcontainerOf(m.environment)));
      assert.equal(again.address, m.address);
      assert.equal(canonicalize(again.environment), canonicalize(m.environment));
    }),
    { numRuns: 300 },
  );
});

test("property: member order, whitespace, comments and trailing commas never change the address", () => {
  fc.assert(
    fc.property(subsetDoc, fc.integer(), fc.integer(), (doc, a, b) => {
      assert.equal(outcome(printJsonc(doc, prng(a))), outcome(printJsonc(doc, prng(b))));
      assert.equal(outcome(printJsonc(doc, prng(a))), outcome(JSON.stringify(doc)));
    }),
    { numRuns: 300 },
  );
});

test("property: layout never changes which members a refusal names", () => {
  const refused = fc.tuple(
    subsetDoc,
    fc.constantFrom<[string, Json]>(
      ["postCreateCommand", "make"],
      ["runArgs", ["--privileged"]],
      ["features", {}],
      ["bogus", 1],
    ),
  );
  fc.assert(
    fc.property(refused, fc.integer(), fc.integer(), ([doc, [k, v]], a, b) => {
      const bad = { ...doc, [k]: v, image: "ubuntu:latest" };
      const first = outcome(printJsonc(bad, prng(a)));
      assert.match(first, /^ManifestRefused .*\/image ImageNotPinned/);
      assert.equal(first, outcome(printJsonc(bad, prng(b))));
    }),
    { numRuns: 200 },
  );
});
