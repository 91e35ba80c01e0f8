// The binaries as a user meets them, run as real processes: exit codes (0 ok, 1 refused, 2 usage or
// unusable input, with one line naming the path and no help text), arguments after `--` belonging to
// the command, `sbx run --json | jq`, key files that openssl reads, a reader that closes the pipe
// early, oversize and pathological input refused by size and depth before any work, and failed
// writes that leave nothing behind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { fromHex, isDidKey, keyPairFromSeed } from "@sbx/wire";
import { keyWarnings, readKey, readPrincipal } from "@sbx/host/keys";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const bins = (JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { bin: Record<string, string> })
  .bin;
const bin = (tool: "sbx" | "jcp") => join(pkg, bins[tool]!);

function run(tool: "sbx" | "jcp", argv: string[], cwd?: string) {
  const r = spawnSync(process.execPath, [bin(tool), ...argv], { encoding: "utf8", ...(cwd ? { cwd } : {}) });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** sh runs a shell line with the binaries as $SBX and $JCP. */
function sh(line: string, cwd: string) {
  const r = spawnSync("bash", ["-c", `set -o pipefail; ${line}`], {
    encoding: "utf8",
    cwd,
    env: {
      ...process.env,
      SBX: `${process.execPath} ${bin("sbx")}`,
      JCP: `${process.execPath} ${bin("jcp")}`,
    },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function has(tool: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0;
}

function oneLine(err: string, what: string): void {
  assert.equal(
    err.trimEnd().split("\n").length,
    1,
    `${what}: one line on stderr, got ${JSON.stringify(err)}`,
  );
  assert.doesNotMatch(err, /usage:/, `${what}: no help text after an error`);
  assert.doesNotMatch(err, /\n\s+at /, `${what}: no stack trace`);
}

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "cli-proc-"));
}

test("exit codes: 0 ok, 1 refused, 2 unreadable input / directory for a file / unwritable output, one line naming the path", () => {
  const d = tmp();
  try {
    const k = run("sbx", ["keygen", "--out", join(d, "k.pem")]);
    assert.equal(k.code, 0, k.err);
    const did = k.out.trim();
    writeFileSync(join(d, "devcontainer.json"), `{"image": "debian@sha256:${"a".repeat(64)}"}`);
    const m = join(d, "m.json");
    assert.equal(
      run("sbx", ["manifest", "ingest", join(d, "devcontainer.json"), "--key", join(d, "k.pem"), "--out", m])
        .code,
      0,
    );
    assert.equal(run("sbx", ["manifest", "verify", m, "--trust", did]).code, 0);
    assert.equal(run("sbx", ["manifest", "verify", m, "--trust", join(d, "k.pub.pem")]).code, 0);
    const other = run("jcp", ["keygen", "--out", join(d, "o.pem")]).out.trim();
    const refused = run("sbx", ["manifest", "verify", m, "--trust", other]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /UnknownSigner/);

    const missing = join(d, "missing.json");
    const cases: [string, string[], string][] = [
      ["unreadable input", ["manifest", "verify", missing, "--any-signer"], missing],
      ["a directory for a file", ["manifest", "verify", d, "--any-signer"], d],
      ["unreadable key", ["manifest", "ingest", join(d, "devcontainer.json"), "--key", missing], missing],
      ["a directory for a key", ["verify", join(d, "r.runrecord"), "--trust", d], d],
      ["unwritable output", ["keygen", "--out", join(d, "k.pem", "sub.pem")], join(d, "k.pem", "sub.pem")],
      [
        "a directory for an output",
        ["manifest", "ingest", join(d, "devcontainer.json"), "--key", join(d, "k.pem"), "--out", d],
        d,
      ],
      [
        "no such output folder",
        ["policy", "new", "--mode", "allowlist", "--out", join(d, "no", "p.json")],
        join(d, "no", "p.json"),
      ],
    ];
    for (const [what, argv, path] of cases) {
      const r = run("sbx", argv);
      assert.equal(r.code, 2, `${what}: ${r.err}`);
      assert.ok(r.err.includes(path), `${what}: names ${path}: ${r.err}`);
      oneLine(r.err, what);
    }
    const usage = run("jcp", ["verify"]);
    assert.equal(usage.code, 2);
    oneLine(usage.err, "usage error");
    assert.match(usage.err, /see jcp verify --help/);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("arguments after -- belong to the command: sbx run -- CMD -h --json", () => {
  const d = tmp();
  try {
    const r = run(
      "sbx",
      ["run", "--", "sh", "-c", 'printf "%s|" "$@"', "argv0", "-h", "--json", "--help"],
      d,
    );
    assert.equal(r.code, 0, r.err);
    assert.ok(r.out.startsWith("-h|--json|--help|"), r.out);
    assert.doesNotMatch(r.out, /usage:/);
    const help = run("sbx", ["run", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.out, /usage: sbx run/);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("sbx run --json prints only JSON on stdout: sbx run --json -- CMD | jq", () => {
  assert.ok(has("jq"), "jq is installed (.ci/run installs it)");
  const d = tmp();
  try {
    const r = sh(
      `$SBX run --json -- sh -c 'echo to-stdout; echo to-stderr >&2' | jq -ec '[.outcome.exit_code, .energy.total_uj != null]'`,
      d,
    );
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.trim(), "[0,true]");
    assert.match(r.err, /to-stdout/);
    assert.match(r.err, /to-stderr/);
    const out = join(d, "out");
    const f = sh(`$SBX run --json --out ${out} -- echo kept | jq -e .attestation >/dev/null`, d);
    assert.equal(f.code, 0, f.err);
    assert.equal(readFileSync(join(out, "stdout"), "utf8"), "kept\n");
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("keygen writes PKCS#8 PEM (0600) and SPKI PEM that openssl reads; openssl's keys are read back", () => {
  assert.ok(has("openssl"), "openssl is installed (.ci/run installs it)");
  const d = tmp();
  try {
    const key = join(d, "host.pem");
    const r = run("sbx", ["keygen", "--out", key, "--json"]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as { did: string; public: string };
    assert.ok(isDidKey(j.did));
    assert.equal(j.public, join(d, "host.pub.pem"));
    assert.equal(statSync(key).mode & 0o777, 0o600);
    assert.match(readFileSync(key, "utf8"), /^-----BEGIN PRIVATE KEY-----\n/);
    const pub = sh(`openssl pkey -in ${key} -pubout`, d);
    assert.equal(pub.code, 0, pub.err);
    assert.equal(pub.out, readFileSync(j.public, "utf8"));
    assert.equal(sh(`openssl pkey -pubin -in ${j.public} -noout`, d).code, 0);
    assert.equal(readKey(key).did, j.did);
    assert.equal(readPrincipal(j.public), j.did);

    const made = join(d, "openssl.pem");
    assert.equal(
      sh(
        `openssl genpkey -algorithm ed25519 -out ${made} && openssl pkey -in ${made} -pubout -out ${made}.pub`,
        d,
      ).code,
      0,
    );
    assert.equal(readPrincipal(`${made}.pub`), readKey(made).did);

    const rsa = join(d, "rsa.pem");
    assert.equal(
      sh(`openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:1024 -out ${rsa} 2>/dev/null`, d).code,
      0,
    );
    const bad = run("sbx", ["manifest", "ingest", join(d, "x.json"), "--key", rsa]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /BadKeyFile: key file .*rsa\.pem: an rsa key, not Ed25519/);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("a JSON key file of an earlier version is read with a deprecation warning and converts to PEM", () => {
  const d = tmp();
  const warned: string[] = [];
  const warn = keyWarnings.warn;
  keyWarnings.warn = (l) => warned.push(l);
  try {
    const kp = keyPairFromSeed(fromHex("11".repeat(32)));
    const old = join(d, "old.json");
    writeFileSync(old, JSON.stringify({ kty: "Ed25519", seed: "11".repeat(32), did: kp.did }), {
      mode: 0o600,
    });
    assert.equal(readKey(old).did, kp.did);
    assert.equal(warned.length, 1);
    assert.match(warned[0]!, /deprecated.*sbx keygen --from/);
    const r = run("sbx", ["keygen", "--from", old, "--out", join(d, "new.pem")]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.trim(), kp.did);
    assert.match(r.err, /deprecated/);
    assert.equal(readKey(join(d, "new.pem")).did, kp.did);
    assert.equal(readPrincipal(join(d, "new.pub.pem")), kp.did);
  } finally {
    keyWarnings.warn = warn;
    rmSync(d, { recursive: true, force: true });
  }
});

test("a reader that closes the pipe early ends the command quietly (EPIPE)", () => {
  const d = tmp();
  try {
    const r = sh(`$SBX run -- seq 1 300000 | head -n 1; echo "sbx=\${PIPESTATUS[0]}"`, d);
    assert.equal(r.out, "1\nsbx=0\n");
    assert.equal(r.err, "", "nothing on stderr: no EPIPE stack trace");
    const h = sh(`$JCP --help | head -c 10 >/dev/null; echo "jcp=\${PIPESTATUS[0]}"`, d);
    assert.equal(h.out, "jcp=0\n");
    assert.equal(h.err, "");
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("CLI readers refuse oversize input by its size before reading it, and deep input by depth", () => {
  const d = tmp();
  try {
    // A sparse 8 GiB file: refused from its size alone (reading it would take minutes).
    const huge = join(d, "huge.json");
    writeFileSync(huge, "[");
    truncateSync(huge, 8 * 1024 ** 3);
    // A real 20 MB array, as a user would make one.
    const big = join(d, "big.json");
    writeFileSync(big, "[" + "0,".repeat(10 * 1024 * 1024) + "0]");
    const deep = join(d, "deep.json");
    writeFileSync(deep, "[".repeat(100_000) + "]".repeat(100_000));
    const readers: ["sbx" | "jcp", (f: string) => string[]][] = [
      ["jcp", (f) => ["verify", f, "--any-signer"]],
      ["sbx", (f) => ["manifest", "verify", f, "--any-signer"]],
      ["sbx", (f) => ["fleet", "verify", f, f, "--any-signer"]],
      ["jcp", (f) => ["inspect", f]],
    ];
    for (const [tool, argv] of readers) {
      for (const f of [huge, big]) {
        const r = run(tool, argv(f));
        assert.equal(r.code, 2, `${tool} ${argv(f).join(" ")}: ${r.err}`);
        assert.match(
          r.err,
          /OversizeInput: .* the limit is 16777216 bytes/,
          `${tool} ${argv(f)[0]}: ${r.err}`,
        );
        assert.ok(r.err.includes(f));
        oneLine(r.err, `${tool} ${argv(f)[0]}`);
      }
      const r = run(tool, argv(deep));
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, /TooDeep/);
    }
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("a failed write leaves neither a temporary file nor a partial output", () => {
  const d = tmp();
  try {
    // Writes past a 0-block file size limit fail with EFBIG (SIGXFSZ ignored), as a full disk would.
    const r = sh(`trap '' XFSZ; ulimit -f 0; $SBX keygen --out ${join(d, "k.pem")}`, d);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /Unwritable: cannot write key file .*k\.pem: file too large/);
    assert.deepEqual(readdirSync(d), [], "nothing left behind");
    mkdirSync(join(d, "out"));
    const p = sh(
      `trap '' XFSZ; ulimit -f 0; $SBX policy new --mode denylist --out ${join(d, "out", "p.json")}`,
      d,
    );
    assert.equal(p.code, 2, p.err);
    assert.deepEqual(readdirSync(join(d, "out")), []);
    assert.ok(!existsSync(join(d, "out", "p.json")));
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
