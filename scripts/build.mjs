#!/usr/bin/env node
// Build step. `node scripts/build.mjs` does both parts; `node scripts/build.mjs cli` only the first
// (the `prepare` script, which runs on `npm ci` / `npm install`, and scripts/test.mjs use that).
//
// 1. The CLIs: packages/cli/src compiled to JavaScript with esbuild into packages/cli/dist/, so
//    `sbx` and `jcp` start without transpiling TypeScript. main.ts and each command module are entry
//    points (main.ts discovers the commands by listing dist/commands/<tool>/); the workspace
//    libraries they import are bundled into shared chunks, third-party packages stay imports.
// 2. The project's own native helper (the exec gate, §5.5), compiled with the machine's C compiler
//    when its source exists. No prebuilt binary is downloaded.
//
// A build that is current is not done again: part 1 writes dist/.build-stamp, the SHA-256 of every
// input it reads (each package's src/ and package.json, the lockfile, this script), and skips the
// bundling when the stamp on disk equals the inputs' digest now; any changed, added or removed source
// changes the digest, so a stale build is rebuilt, never used. Part 2's build.sh rebuilds each helper
// only when one of its sources is newer. SBX_BUILD_FORCE=1 rebuilds regardless.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { spawnSync } from "node:child_process";

const root = resolve(import.meta.dirname, "..");
const cli = join(root, "packages/cli");
const dist = join(cli, "dist");
const main = join(cli, "src/main.ts");

/** The third-party packages the workspace's libraries depend on at run time: left as imports. */
function thirdParty() {
  const out = new Set();
  for (const pkg of readdirSync(join(root, "packages"))) {
    const file = join(root, "packages", pkg, "package.json");
    if (!existsSync(file)) continue;
    const deps = JSON.parse(readFileSync(file, "utf8")).dependencies ?? {};
    for (const name of Object.keys(deps)) if (!name.startsWith("@sbx/")) out.add(name);
  }
  return [...out].flatMap((n) => [n, `${n}/*`]);
}

/** The entry points: main.ts and every command module main.ts would find under src/commands/<tool>/. */
function entries() {
  const out = [main];
  for (const tool of ["sbx", "jcp"]) {
    const dir = join(cli, "src/commands", tool);
    for (const f of readdirSync(dir).sort()) if (f.endsWith(".ts")) out.push(join(dir, f));
  }
  return out;
}

// A module that finds files beside itself (`new URL("../../native/build/x", import.meta.url)`) must
// keep finding them once bundled into dist/: `import.meta.url` in every source but main.ts becomes a
// marker naming the source, and each output file replaces the marker with the source's URL computed
// from the output's own location (a relative path, so the checkout can move after the build).
const MARK = "__sbx_source_url__";
const sourceUrl = {
  name: "source-url",
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      if (args.path === main || !text.includes("import.meta.url")) return undefined;
      const rel = relative(root, args.path).split("\\").join("/");
      return {
        contents: text.replaceAll("import.meta.url", `${MARK}(${JSON.stringify(rel)})`),
        loader: "ts",
      };
    });
  },
};
function placeSourceUrls(outPath, text) {
  return text.replace(new RegExp(`${MARK}\\(("[^"]*")\\)`, "g"), (_, lit) => {
    const up = relative(dirname(outPath), root).split("\\").join("/") || ".";
    return `new URL(${JSON.stringify(`${up}/${JSON.parse(lit)}`)}, import.meta.url).href`;
  });
}

/** esbuild, a devDependency; `npm ci --omit=dev` runs `prepare` without it, and then nothing is built. */
async function loadEsbuild() {
  try {
    return await import("esbuild");
  } catch (e) {
    if (e?.code !== "ERR_MODULE_NOT_FOUND" || process.env.npm_lifecycle_event !== "prepare") throw e;
    console.error("build: esbuild is not installed (dev dependencies omitted), so sbx and jcp are not built");
    return null;
  }
}

// 1b. The report page's script (issue 19): the page's verification (packages/cli/src/report) with the
//     same wire and library code, bundled for browsers into dist/report/page.js, which `sbx report`
//     inlines. No Node API reaches the browser: the two modules the wire layer tries first for speed
//     (node:crypto for Ed25519, @napi-rs/blake-hash for bulk BLAKE3) are replaced by a module that
//     fails to load, so the wire layer takes its portable path (@noble/curves, hash-wasm, plain JS).
const noNode = {
  name: "no-node",
  setup(b) {
    b.onResolve({ filter: /^(node:crypto|@napi-rs\/blake-hash)$/ }, (args) => ({
      path: args.path,
      namespace: "no-node",
    }));
    b.onLoad({ filter: /.*/, namespace: "no-node" }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`${args.path} is not available in a browser`)});`,
      loader: "js",
    }));
  },
};
async function buildReportPage(esbuild) {
  const r = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [join(cli, "src/report/page/main.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["chrome120", "firefox121", "safari17"],
    minify: true,
    legalComments: "inline",
    plugins: [noNode],
    write: false,
    logLevel: "warning",
  });
  return r.outputFiles[0].text;
}

/** Every file under dir (sorted, recursive), as paths relative to the root. */
function filesUnder(dir, out) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) filesUnder(p, out);
    else out.push(relative(root, p));
  }
  return out;
}

/** The digest of part 1's inputs: each file's path and bytes, framed by their lengths. */
function inputsDigest() {
  const files = [relative(root, import.meta.filename), "package-lock.json"];
  for (const pkg of readdirSync(join(root, "packages")).sort()) {
    files.push(...filesUnder(join(root, "packages", pkg, "src"), []));
    if (existsSync(join(root, "packages", pkg, "package.json"))) files.push(`packages/${pkg}/package.json`);
  }
  const h = createHash("sha256");
  for (const f of files) {
    const bytes = existsSync(join(root, f)) ? readFileSync(join(root, f)) : new Uint8Array(0);
    h.update(`${f.length}:${f}${bytes.length}:`).update(bytes);
  }
  return h.digest("hex");
}

const stampPath = join(dist, ".build-stamp");
function isCurrent(digest) {
  if (process.env.SBX_BUILD_FORCE === "1") return false;
  try {
    return readFileSync(stampPath, "utf8") === digest;
  } catch {
    return false;
  }
}

async function buildCli() {
  const digest = inputsDigest();
  if (isCurrent(digest)) return;
  const esbuild = await loadEsbuild();
  if (esbuild === null) return;
  const page = await buildReportPage(esbuild);
  const r = await esbuild.build({
    absWorkingDir: root,
    entryPoints: entries(),
    outbase: join(cli, "src"),
    outdir: dist,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external: thirdParty(),
    chunkNames: "chunks/[name]-[hash]",
    plugins: [sourceUrl],
    write: false,
    logLevel: "warning",
  });
  rmSync(dist, { recursive: true, force: true });
  for (const f of r.outputFiles) {
    const text = placeSourceUrls(f.path, f.text);
    if (text.includes(MARK)) throw new Error(`build: ${relative(root, f.path)} keeps a source-URL marker`);
    mkdirSync(dirname(f.path), { recursive: true });
    writeFileSync(f.path, text);
  }
  mkdirSync(join(dist, "report"), { recursive: true });
  writeFileSync(join(dist, "report", "page.js"), page);
  await writeCommandIndex();
  writeFileSync(stampPath, digest);
}

/**
 * Each tool's command index, dist/commands/<tool>/index.json: the first word of every command name,
 * with the modules that define a command of that word. main.ts then imports only the modules a
 * command line can name (about a quarter of an invocation's start-up: every module, with the
 * libraries each brings in, is loaded only for help or an unknown command). Made from the built
 * modules themselves, in the same build, so it is never older than they are.
 */
async function writeCommandIndex() {
  for (const tool of ["sbx", "jcp"]) {
    const dir = join(dist, "commands", tool);
    const index = {};
    for (const f of readdirSync(dir).sort()) {
      if (!f.endsWith(".js")) continue;
      const mod = await import(pathToFileURL(join(dir, f)).href);
      for (const c of [mod.command, ...(mod.commands ?? [])]) {
        if (c === undefined) continue;
        const word = c.name.split(" ")[0];
        index[word] = [...new Set([...(index[word] ?? []), f])];
      }
    }
    writeFileSync(join(dir, "index.json"), `${JSON.stringify(index, null, 1)}\n`);
  }
}

function buildNative() {
  const helper = join(root, "packages/host/native/build.sh");
  if (!existsSync(helper)) return;
  const r = spawnSync("bash", [helper], { stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const what = process.argv[2] ?? "all";
if (what !== "all" && what !== "cli") {
  console.error(`build: unknown part ${JSON.stringify(what)}; parts: cli (or none for everything)`);
  process.exit(2);
}
await buildCli();
if (what === "all") buildNative();
