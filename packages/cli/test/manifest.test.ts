// `sbx manifest ingest` / `sbx manifest verify` (sandbox-attest §14): written, verified, refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../src/main.ts";
import { readKey } from "@sbx/host/keys";

async function sbx(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const PIN = `example.org/team/img@sha256:${"e".repeat(64)}`;

test("manifest ingest writes a signed manifest, verify accepts it, a tampered one is refused", async () => {
  const dir = mkdtempSync(join(tmpdir(), "manifest-"));
  try {
    const key = join(dir, "steward.key");
    assert.equal((await sbx(["keygen", "--out", key])).code, 0);
    const src = join(dir, "devcontainer.json");
    writeFileSync(src, `// c\n{"image": "${PIN}", "customizations": {"vscode": {}},}`);
    const out = join(dir, "m.dsse.json");
    const r = await sbx(["manifest", "ingest", src, "--key", key, "--out", out]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^blake3:[0-9a-f]{64}$/);
    assert.match(r.err, /ignored \/customizations/);
    const did = readKey(key).did;
    const v = await sbx(["manifest", "verify", out, "--steward", did, "--json"]);
    assert.equal(v.code, 0, v.err);
    assert.equal((JSON.parse(v.out) as { address: string }).address, r.out);
    assert.equal(
      (
        await sbx([
          "manifest",
          "verify",
          out,
          "--steward",
          "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
        ])
      ).code,
      1,
    );
    const env = JSON.parse(readFileSync(out, "utf8")) as { payload: string };
    const body = Buffer.from(env.payload, "base64").toString().replace('"init":false', '"init":true');
    writeFileSync(out, JSON.stringify({ ...env, payload: Buffer.from(body).toString("base64") }));
    const t = await sbx(["manifest", "verify", out, "--any-signer", "--json"]);
    assert.equal(t.code, 1);
    assert.equal((JSON.parse(t.out) as { code: string }).code, "BadSignature");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("manifest ingest lists every offending member; parse errors and usage errors exit 2", async () => {
  const dir = mkdtempSync(join(tmpdir(), "manifest-"));
  try {
    const key = join(dir, "steward.key");
    await sbx(["keygen", "--out", key]);
    const src = join(dir, "devcontainer.json");
    writeFileSync(
      src,
      `{"image": "ubuntu:22.04", "postCreateCommand": "make", "privileged": true, "features": {}}`,
    );
    const r = await sbx(["manifest", "ingest", src, "--key", key, "--out", join(dir, "m.json"), "--json"]);
    assert.equal(r.code, 1);
    const body = JSON.parse(r.out) as { code: string; members: { pointer: string; code: string }[] };
    assert.equal(body.code, "ManifestRefused");
    assert.deepEqual(
      body.members.map((m) => m.pointer),
      ["/features", "/image", "/postCreateCommand", "/privileged"],
    );
    writeFileSync(src, `{"image": "${PIN}"} trailing`);
    assert.equal((await sbx(["manifest", "ingest", src, "--key", key])).code, 2);
    assert.equal((await sbx(["manifest", "ingest", src])).code, 2);
    assert.equal((await sbx(["manifest", "verify", join(dir, "missing.json"), "--any-signer"])).code, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
