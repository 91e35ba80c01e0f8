// A real distribution image (issue 29): Debian bookworm with python3, built from Debian packages by
// scripts/test-image.sh (mmdebstrap, umoci, skopeo), with a second layer adding the user `agent` and
// /usr/local/bin/sbx-image-only, a program no host has. CI builds it and exports its folder as
// SBX_TEST_DEBIAN_IMAGE; without it these tests fail, saying how to build it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../src/main.ts";

const IMAGE = process.env.SBX_TEST_DEBIAN_IMAGE ?? "";
const HOW =
  'build it with `eval "$(scripts/test-image.sh)"` (root; apt-get install -y mmdebstrap umoci skopeo)';

async function sbx(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

// The BLAKE3 of a file of the image, read from the layer mmdebstrap wrote, by b3sum: not by our code.
function b3OfImageFile(member: string, layer = "rootfs.tar"): string {
  const bytes = execFileSync("tar", ["-xOf", join(IMAGE, layer), member], { maxBuffer: 64 << 20 });
  return `blake3:${execFileSync("b3sum", ["--no-names"], { input: bytes }).toString().trim()}`;
}

let dir = "";
let store = "";
let reference = "";

before(async () => {
  assert.ok(
    IMAGE !== "" && existsSync(join(IMAGE, "oci", "index.json")),
    `SBX_TEST_DEBIAN_IMAGE must name the Debian test image's folder: ${HOW}`,
  );
  dir = mkdtempSync(join(tmpdir(), "sbx-debian-"));
  store = join(dir, "images");
  const r = await sbx([
    "image",
    "import",
    join(IMAGE, "oci"),
    "--name",
    "sbx.test/debian",
    "--images",
    store,
  ]);
  assert.equal(r.code, 0, r.err);
  reference = r.out;
});

after(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

test("an OCI layout whose index names a tag: --name gives the repository, the tag is the index's; none is exit 2", async () => {
  assert.match(reference, /^sbx\.test\/debian@sha256:[0-9a-f]{64}$/);
  const list = await sbx(["image", "list", "--images", store]);
  assert.equal(list.out, `sbx.test/debian:bookworm\tsha256:${reference.split("@sha256:")[1] ?? ""}`);
  const unnamed = await sbx(["image", "import", join(IMAGE, "oci"), "--images", join(dir, "other")]);
  assert.equal(unnamed.code, 2, unnamed.err);
  assert.match(unnamed.err, /ImageUnnamed: .*only the tag bookworm: give its repository with --name NAME/);
});

test("device nodes of the distribution's layer are skipped and listed at import, not refused", async () => {
  const r = await sbx([
    "image",
    "import",
    join(IMAGE, "oci"),
    "--name",
    "sbx.test/d2",
    "--images",
    join(dir, "s2"),
    "--json",
  ]);
  assert.equal(r.code, 0, r.err);
  const rows = JSON.parse(r.out) as { skipped_devices: string[] }[];
  // mmdebstrap's tar holds these character devices (tar tvf lists them with type c).
  const listed = execFileSync("tar", ["-tvf", join(IMAGE, "rootfs.tar")])
    .toString()
    .split("\n")
    .filter((l) => /^[cb]/.test(l))
    .map((l) => l.split(/\s+/).pop() ?? "");
  assert.ok(listed.includes("./dev/null"), "the layer holds /dev/null");
  assert.deepEqual(rows[0]?.skipped_devices, listed);
  assert.match(r.err, /skipped \d+ device nodes \(the sandbox's \/dev is its own\): .*\.\/dev\/console/);
});

test("the docker-archive form (skopeo) imports under its RepoTags name", async () => {
  const r = await sbx(["image", "import", join(IMAGE, "docker.tar"), "--images", store]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^sbx\.test\/debian@sha256:[0-9a-f]{64}$/);
});

const DEVCONTAINER = `{
  "image": "sbx.test/debian:bookworm",
  "remoteUser": "agent",
  "workspaceFolder": "/workspace",
  "containerEnv": { "JOB": "steps" },
  "hostRequirements": { "cpus": 1 }
}
`;

async function pinnedManifest(): Promise<string> {
  writeFileSync(join(dir, "devcontainer.json"), DEVCONTAINER);
  const out = join(dir, "dc.pinned.json");
  const r = await sbx(["manifest", "pin", join(dir, "devcontainer.json"), "--out", out, "--images", store]);
  assert.equal(r.code, 0, r.err);
  return out;
}

test("the program is the image's: one only the image holds runs, and the journal names that file", async () => {
  const manifest = await pinnedManifest();
  const ws = mkdtempSync(join(dir, "ws-"));
  const out = join(dir, "out-only");
  const r = await sbx([
    "run",
    "--manifest",
    manifest,
    "--images",
    store,
    "--workspace",
    ws,
    "--out",
    out,
    "--",
    "sbx-image-only",
  ]);
  assert.equal(r.code, 0, r.err);
  assert.match(readFileSync(join(out, "stdout"), "utf8"), /^image-only agent \/workspace 3\n$/);
  const journal = JSON.parse(readFileSync(join(out, "journal.json"), "utf8")) as {
    events: { type: string; binary?: string }[];
  };
  const start = journal.events.find((e) => e.type === "process.start");
  assert.equal(start?.binary, b3OfImageFile("./usr/local/bin/sbx-image-only", "layer2.tar"));
});

test("python3 is the image's python3 (the link read inside the image), not the host's", async () => {
  const manifest = await pinnedManifest();
  const ws = mkdtempSync(join(dir, "ws-"));
  const out = join(dir, "out-py");
  const r = await sbx([
    "run",
    "--manifest",
    manifest,
    "--images",
    store,
    "--workspace",
    ws,
    "--out",
    out,
    "--",
    "python3",
    "-c",
    "import os; print(os.environ['JOB'], os.readlink('/usr/bin/python3'))",
  ]);
  assert.equal(r.code, 0, r.err);
  assert.equal(readFileSync(join(out, "stdout"), "utf8"), "steps python3.11\n");
  const journal = JSON.parse(readFileSync(join(out, "journal.json"), "utf8")) as {
    events: { type: string; binary?: string }[];
  };
  const start = journal.events.find((e) => e.type === "process.start");
  assert.equal(start?.binary, b3OfImageFile("./usr/bin/python3.11"));
});

test("a program the image lacks is refused naming the paths searched, never run or stated as S0", async () => {
  const manifest = await pinnedManifest();
  const ws = mkdtempSync(join(dir, "ws-"));
  // bwrap is on this host's /usr/bin, not in the image.
  const r = await sbx([
    "run",
    "--manifest",
    manifest,
    "--images",
    store,
    "--workspace",
    ws,
    "--",
    "bwrap",
    "--version",
  ]);
  assert.equal(r.code, 1, r.err);
  assert.match(
    r.err,
    /ProgramNotFound: bwrap is not in the sandbox \(the image's rootfs\): searched \/usr\/local\/sbin\/bwrap, \/usr\/local\/bin\/bwrap, \/usr\/sbin\/bwrap, \/usr\/bin\/bwrap, \/sbin\/bwrap, \/bin\/bwrap/,
  );
  assert.doesNotMatch(r.out + r.err, /unsandboxed|S0/);
});

test("a warm pool on the image: the claimed item runs the image's program as the manifest's user", async () => {
  const manifest = await pinnedManifest();
  const pool = join(dir, "pool");
  const c = await sbx([
    "pool",
    "create",
    pool,
    "--manifest",
    manifest,
    "-n",
    "2",
    "--images",
    store,
    "--store",
    join(dir, "runs"),
  ]);
  try {
    assert.equal(c.code, 0, c.err);
    const r = await sbx(["pool", "claim", pool, "--store", join(dir, "runs"), "--", "sbx-image-only"]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^image-only agent \/workspace 3$/m);
    // The second item's record says it was built on the host's /usr: its claim is not signed.
    const info = join(pool, "items", "item-0001", "sandbox.json");
    const parked = JSON.parse(readFileSync(info, "utf8")) as { provided: { image: string | null } };
    assert.match(parked.provided.image ?? "", /^[0-9a-f]{64}$/);
    writeFileSync(info, JSON.stringify({ ...parked, provided: { ...parked.provided, image: null } }));
    const refused = await sbx(["pool", "claim", pool, "--store", join(dir, "runs"), "--", "true"]);
    assert.equal(refused.code, 1, refused.err);
    assert.match(
      refused.err,
      /SandboxMismatch: the sandbox was built from the host's \/usr \(no image\), but the manifest .* pins image sha256:/,
    );
  } finally {
    await sbx(["pool", "destroy", pool, "--store", join(dir, "runs")]);
  }
});

test("disk bounds on the Debian image: 1 GiB into a 64 MiB workspace, /tmp and /dev/shm is ENOSPC each time; the host's disk barely moves", async () => {
  const manifest = await pinnedManifest();
  const ws = mkdtempSync(join(dir, "ws-"));
  const out = join(dir, "out-disk");
  // The image's python3 writes 1 MiB at a time until the kernel refuses, then says how and how far.
  const fill = [
    "import errno, os",
    "for p in [os.path.join(os.getcwd(), 'big'), '/tmp/big', '/dev/shm/big']:",
    "    n, why = 0, 'none'",
    "    with open(p, 'wb', buffering=0) as f:",
    "        try:",
    "            while n < 1 << 30: n += f.write(b'\\0' * (1 << 20))",
    "        except OSError as e: why = errno.errorcode[e.errno]",
    "    print(p, why, os.stat(p).st_size)",
  ].join("\n");
  // The host's filesystem (the workspace itself is its own while the unit runs).
  const free = () => {
    const s = statfsSync(dir);
    return s.bfree * s.bsize;
  };
  const before = free();
  let least = before;
  const poll = setInterval(() => (least = Math.min(least, free())), 5);
  const r = await sbx([
    ...["run", "--manifest", manifest, "--images", store, "--workspace", ws, "--out", out],
    ...["--disk", "64MiB", "--tmp-size", "64MiB", "--", "python3", "-c", fill],
  ]).finally(() => clearInterval(poll));
  assert.equal(r.code, 0, r.err);
  const lines = readFileSync(join(out, "stdout"), "utf8").trim().split("\n");
  assert.deepEqual(
    lines.map((l) => l.split(" ").slice(0, 2).join(" ")),
    ["/workspace/big ENOSPC", "/tmp/big ENOSPC", "/dev/shm/big ENOSPC"],
  );
  for (const l of lines) assert.ok(Number(l.split(" ")[2]) <= 64 << 20, l);
  assert.match(r.out, /limits hit {3}workspace size/);
  // The workspace holds at most its bound on disk; twice that for the moment of the write-back.
  assert.ok(
    before - least <= 2 * (64 << 20) + (16 << 20),
    `the host's free space dropped by ${String(before - least)}`,
  );
  assert.ok(statSync(join(ws, "big")).size <= 64 << 20);
});
