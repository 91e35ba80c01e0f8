#!/usr/bin/env node
// Layering check, part of `npm run lint` (DESIGN.md §2). Dependencies run one way:
//   wire ← jcp-grant ← sandbox-attest ← host ← cli
// The host is the engine (ENGINE.md): it never imports the CLI, one of its front doors, by name or
// by a relative path, so no engine module can throw the CLI's UsageError or CliError.
// conformance uses the libraries and the host; bench/ and scripts/ (the demo) sit beside and may
// use any package; nothing imports them, and nothing below imports what is above it.
// Every import of every source file (static, `export … from`, `import type`, `import("…")` with a
// literal specifier, `require`) is read from the TypeScript syntax tree and refused when it
//   - names a workspace package its layer may not use, or one its package.json does not declare;
//   - names a third-party package not declared (src/: the package's dependencies; test/: those, its
//     devDependencies or the root's; bench/ and scripts/: the root's devDependencies or any
//     package's dependencies, all of which the workspace installs);
//   - names a subpath the target package does not export, or a relative path out of its package
//     (a test may use the test/ fixtures of a package below it; from bench/ and scripts/, a path
//     into a package is refused: import it by its name).
// It also refuses an `exports` entry naming a missing file, and a runtime dependency that the
// package's src/ never imports. An import whose specifier is computed at run time cannot be read
// here (the CLI and the conformance registry discover modules in their own directory that way).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";

/** The workspace packages (by directory) each package's src/ and test/ may import, itself aside. */
export const ALLOWED = {
  wire: [],
  "jcp-grant": ["wire"],
  "sandbox-attest": ["wire", "jcp-grant"],
  host: ["wire", "jcp-grant", "sandbox-attest"],
  cli: ["wire", "jcp-grant", "sandbox-attest", "host"],
  conformance: ["wire", "jcp-grant", "sandbox-attest", "host"],
};
const BESIDE = ["bench", "scripts"];
const SOURCE = /\.(ts|mts|js|mjs)$/;
const SKIP = new Set(["node_modules", "dist", "native"]);

/** files lists the source files under dir, sorted, leaving out build output and native code. */
function files(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (!SKIP.has(name)) out.push(...files(p));
    } else if (SOURCE.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** specifiers returns every module specifier a file names, with its line. */
export function specifiers(path, text = readFileSync(path, "utf8")) {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const out = [];
  const add = (node) => {
    if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)))
      out.push({ spec: node.text, line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
  };
  const visit = (n) => {
    if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) add(n.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference))
      add(n.moduleReference.expression);
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) add(n.argument.literal);
    else if (ts.isCallExpression(n)) {
      const callee = n.expression;
      if (
        callee.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(callee) && callee.text === "require")
      )
        add(n.arguments[0]);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** packageName reads "@scope/name" or "name" from a bare specifier, and the subpath after it. */
function splitBare(spec) {
  const parts = spec.split("/");
  const n = spec.startsWith("@") ? 2 : 1;
  const rest = parts.slice(n).join("/");
  return { name: parts.slice(0, n).join("/"), subpath: rest ? `./${rest}` : "." };
}

const isBuiltin = (spec) => spec.startsWith("node:") || builtinModules.includes(spec.split("/")[0]);
const inside = (dir, p) => p === dir || p.startsWith(dir + sep);

/** readPackages loads every packages/<dir>/package.json. */
function readPackages(root) {
  const pkgs = new Map();
  for (const dir of readdirSync(join(root, "packages")).sort()) {
    const file = join(root, "packages", dir, "package.json");
    if (existsSync(file))
      pkgs.set(dir, { dir, path: join(root, "packages", dir), json: JSON.parse(readFileSync(file, "utf8")) });
  }
  return pkgs;
}

/**
 * checkLayers returns one line per problem found in the workspace at `root` (none: the layering
 * holds), each `where: kind: detail`, kind one of layer, undeclared, unknown, not-exported, outside,
 * into-package, missing-export, unused-dependency, no-layer.
 */
export function checkLayers(root) {
  root = resolve(root);
  const rootJson = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const rootDev = Object.keys(rootJson.devDependencies ?? {});
  const pkgs = readPackages(root);
  const workspaceDeps = [...pkgs.values()].flatMap((p) => Object.keys(p.json.dependencies ?? {}));
  const byName = new Map([...pkgs.values()].map((p) => [p.json.name, p]));
  const problems = [];
  const used = new Map([...pkgs.keys()].map((d) => [d, new Set()]));

  for (const p of pkgs.values()) {
    for (const [key, target] of Object.entries(p.json.exports ?? {}))
      if (typeof target === "string" && !existsSync(join(p.path, target)))
        problems.push(
          `packages/${p.dir}/package.json: missing-export: ${JSON.stringify(key)} names ${target}, which does not exist`,
        );
    if (!(p.dir in ALLOWED))
      problems.push(`packages/${p.dir}: no-layer: add it to ALLOWED in scripts/layers.mjs`);
  }

  // A test may share the test fixtures of a package its layer may use (packages/<q>/test/…).
  const sharedFixture = (target, p) =>
    ALLOWED[p.dir]?.some((q) => pkgs.has(q) && inside(join(pkgs.get(q).path, "test"), target)) ?? false;

  const check = (file, zone, p) => {
    const rel = relative(root, file);
    for (const { spec, line } of specifiers(file)) {
      const at = `${rel}:${line}: ${JSON.stringify(spec)}`;
      if (isBuiltin(spec)) continue;
      if (spec.startsWith(".")) {
        const target = resolve(dirname(file), spec);
        if (p && !inside(p.path, target) && !(zone === "test" && sharedFixture(target, p)))
          problems.push(`${at}: outside: reaches outside packages/${p.dir}`);
        if (!p && inside(join(root, "packages"), target))
          problems.push(`${at}: into-package: import the package by its name`);
        continue;
      }
      const { name, subpath } = splitBare(spec);
      const q = byName.get(name);
      if (p && zone === "src") used.get(p.dir).add(name);
      if (q) {
        const exported = q.json.exports && Object.hasOwn(q.json.exports, subpath);
        if (!exported) problems.push(`${at}: not-exported: ${name} exports no ${JSON.stringify(subpath)}`);
        if (!p || q === p) continue;
        if (!ALLOWED[p.dir]?.includes(q.dir)) problems.push(`${at}: layer: ${p.dir} may not import ${q.dir}`);
        else if (!Object.hasOwn(p.json.dependencies ?? {}, name))
          problems.push(`${at}: undeclared: ${name} is not in packages/${p.dir} dependencies`);
        continue;
      }
      if (name.startsWith("@sbx/")) {
        problems.push(`${at}: unknown: no workspace package is named ${name}`);
        continue;
      }
      const declared = !p
        ? [...rootDev, ...workspaceDeps]
        : zone === "src"
          ? Object.keys(p.json.dependencies ?? {})
          : [
              ...Object.keys(p.json.dependencies ?? {}),
              ...Object.keys(p.json.devDependencies ?? {}),
              ...rootDev,
            ];
      if (!declared.includes(name)) {
        const where = !p
          ? "the root devDependencies or any package's dependencies"
          : zone === "src"
            ? `packages/${p.dir} dependencies`
            : `packages/${p.dir} or root devDependencies`;
        problems.push(`${at}: undeclared: ${name} is not in ${where}`);
      }
    }
  };

  for (const p of pkgs.values()) {
    for (const f of [...files(join(p.path, "src")), ...files(join(p.path, "bin"))]) check(f, "src", p);
    for (const f of files(join(p.path, "test"))) check(f, "test", p);
    for (const dep of Object.keys(p.json.dependencies ?? {}))
      if (!used.get(p.dir).has(dep))
        problems.push(
          `packages/${p.dir}/package.json: unused-dependency: ${dep} is never imported by its src/`,
        );
  }
  for (const dir of BESIDE) for (const f of files(join(root, dir))) check(f, "beside", null);
  return problems;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const root = process.argv[2] ?? resolve(import.meta.dirname, "..");
  const problems = checkLayers(root);
  for (const line of problems) console.error(line);
  if (problems.length) {
    console.error(`layers: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log("layers: every import keeps to its layer and is declared");
}
