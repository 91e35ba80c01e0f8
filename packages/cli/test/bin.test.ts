// The bins as a user runs them: `sbx` and `jcp` start from the JavaScript compiled into dist/
// (scripts/test.mjs builds it before the tests), find every command the sources hold, and say how
// to build when nothing is built.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCommands } from "../src/main.ts";

const CLI = join(import.meta.dirname, "..");
const VERSION = (JSON.parse(readFileSync(join(CLI, "package.json"), "utf8")) as { version: string }).version;

function bin(path: string, argv: string[]) {
  const r = spawnSync(process.execPath, [path, ...argv], { encoding: "utf8" });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function binAsync(path: string, argv: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [path, ...argv]);
    let out = "";
    let err = "";
    p.stdout.on("data", (b: Buffer) => (out += b.toString()));
    p.stderr.on("data", (b: Buffer) => (err += b.toString()));
    p.on("close", (code) => resolve({ code, out, err }));
  });
}

test("the compiled bins print their version and exit 0, with nothing on stderr", () => {
  for (const tool of ["sbx", "jcp"]) {
    const r = bin(join(CLI, "bin", `${tool}.mjs`), ["--version"]);
    assert.deepEqual(r, { code: 0, out: `${tool} ${VERSION}\n`, err: "" }, tool);
  }
});

test("the compiled bins list exactly the commands of the sources", async () => {
  for (const tool of ["sbx", "jcp"] as const) {
    const r = bin(join(CLI, "bin", `${tool}.mjs`), ["--help"]);
    assert.equal(r.code, 0, tool);
    const listed = r.out
      .split("\n")
      .filter((l) => l.startsWith("  ") && !l.startsWith("   "))
      .map((l) => l.trim().split(/\s{2,}/)[0]);
    const names = (await loadCommands(tool)).map((c) => c.name);
    assert.deepEqual(listed, names, `${tool}: got ${JSON.stringify(listed)}, want ${JSON.stringify(names)}`);
  }
});

test("every command of the sources answers --help from the compiled bin, found through the build's index", async () => {
  for (const tool of ["sbx", "jcp"] as const) {
    const index = JSON.parse(
      readFileSync(join(CLI, "dist", "commands", tool, "index.json"), "utf8"),
    ) as Record<string, string[]>;
    const cmds = await loadCommands(tool);
    for (const c of cmds) {
      const word = c.name.split(" ")[0] ?? "";
      assert.ok((index[word] ?? []).length > 0, `${tool} ${c.name}: its first word is in the index`);
    }
    // Side by side: one process each, as a user would start them.
    const ran = await Promise.all(
      cmds.map((c) => binAsync(join(CLI, "bin", `${tool}.mjs`), [...c.name.split(" "), "--help"])),
    );
    cmds.forEach((c, i) => {
      const r = ran[i]!;
      assert.equal(r.code, 0, `${tool} ${c.name} --help: ${r.err}`);
      assert.match(r.out, new RegExp(`^usage: ${tool} ${c.name}\\b`, "m"), `${tool} ${c.name} --help`);
    });
  }
});

test("a bin with nothing built says how to build it and exits 2", () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-unbuilt-"));
  try {
    mkdirSync(join(dir, "bin"));
    for (const f of ["sbx.mjs", "start.mjs"]) copyFileSync(join(CLI, "bin", f), join(dir, "bin", f));
    const r = bin(join(dir, "bin", "sbx.mjs"), ["--version"]);
    assert.equal(r.code, 2);
    assert.equal(r.out, "");
    assert.match(r.err, /^sbx: not built \(no .*dist\/main\.js\); run `npm run build`/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
