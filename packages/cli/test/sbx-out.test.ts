// `sbx run --out DIR` where DIR lies in a tree the unit controls: no link planted in DIR (or DIR
// itself being a link) is ever written through by the host (§12, issue 20).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../src/main.ts";

async function sbxRun(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", ["run", ...argv], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

test("sbx run --out: a link the command plants at DIR/attestation.json is replaced, not written through", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "sbx-out-"));
  try {
    const host = join(tmp, "host-secret");
    writeFileSync(host, "host secret\n");
    const out = join(tmp, "ws", "out");
    mkdirSync(out, { recursive: true });
    const r = await sbxRun([
      "--unsandboxed",
      "--out",
      out,
      "--",
      "sh",
      "-c",
      `ln -s ${host} ${out}/attestation.json; ln -s ${host} ${out}/journal.json`,
    ]);
    assert.equal(r.code, 0, r.err);
    assert.equal(readFileSync(host, "utf8"), "host secret\n", "the host file is untouched");
    assert.ok(lstatSync(join(out, "attestation.json")).isFile(), "the record replaced the link");
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("sbx run --out: a link planted at DIR/stdout is refused with UnsafePath", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "sbx-out-"));
  try {
    const host = join(tmp, "host-secret");
    writeFileSync(host, "host secret\n");
    const out = join(tmp, "out");
    mkdirSync(out);
    symlinkSync(host, join(out, "stdout"));
    const r = await sbxRun(["--unsandboxed", "--out", out, "--", "echo", "overwrite"]);
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /UnsafePath/);
    assert.equal(readFileSync(host, "utf8"), "host secret\n");
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("sbx run --out: DIR that is a link to a host directory is refused with UnsafePath", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "sbx-out-"));
  try {
    const hostDir = join(tmp, "host-dir");
    mkdirSync(hostDir);
    const out = join(tmp, "ws-out");
    symlinkSync(hostDir, out);
    const r = await sbxRun(["--unsandboxed", "--out", out, "--", "true"]);
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /UnsafePath/);
    assert.deepEqual(readdirSync(hostDir), [], "nothing was written into the host directory");
    assert.ok(existsSync(out));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
