// §5.5.5 exec routes past the kernel's marks (THREATS §3) and the read-only rule of the cache: only
// a file on a read-only mount is cached (by the helper or by the kernel); on a writable mount a
// rewrite the kernel does not report (a shared writable mapping) is still decided by its new
// content. Also: a decision line with a path of PATH_MAX bytes is journaled, no block device node
// can be made, the kernel's settings cannot be written, and /proc/self/map_files and
// /proc/self/fd/N run nothing denied.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makePolicy, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import { hashFile } from "@sbx/host/gate";
import { withFixture, refusals, runSh, type Fixture } from "./fixture.ts";

let f: Fixture;
let policy: ExecPolicy;

withFixture((x) => {
  f = x;
  policy = makePolicy("denylist", [], [f.deniedDigest]);
});

/** pad returns `b` zero-padded to `n` bytes (an ELF program still runs with bytes after its end). */
function pad(b: Buffer, n: number): Buffer {
  return Buffer.concat([b, Buffer.alloc(n - b.length)]);
}

describe("the cache only where nothing can rewrite a file", () => {
  test("on a writable mount every exec is hashed; no mask is set", { timeout: 30_000 }, async () => {
    const r = await runSh(f, policy, "for i in 1 2 3 4; do ./allowed; done");
    const runs = r.decisions.filter((d) => d.digest === f.okDigest);
    assert.equal(runs.length, 4, JSON.stringify(runs));
    assert.ok(
      runs.every((d) => d.allowed && d.source === "hash"),
      JSON.stringify(runs),
    );
  });

  test("on a read-only mount warm execs come from the cache", { timeout: 30_000 }, async () => {
    const ro = join(f.ws, "ro2");
    mkdirSync(ro, { recursive: true });
    copyFileSync(f.ok, join(ro, "allowed"));
    const r = await runSh(f, policy, "for i in 1 2 3 4; do ./ro2/allowed; done", { readOnly: [ro] });
    const runs = r.decisions.filter((d) => d.digest === f.okDigest);
    assert.equal(runs.length, 4, JSON.stringify(runs));
    assert.ok(
      runs.slice(1).every((d) => d.allowed && d.source === "cache"),
      JSON.stringify(runs),
    );
    assert.ok((r.stats?.kernelHits ?? 0) >= 3, `kernel hits ${r.stats?.kernelHits}`);
  });

  test(
    "an allowed file rewritten through a shared writable mapping (no modify event) is decided by its new content",
    { timeout: 30_000 },
    async () => {
      const ok = readFileSync(f.ok);
      const bad = readFileSync(f.denied);
      const n = Math.max(ok.length, bad.length);
      writeFileSync(join(f.ws, "prog"), pad(ok, n));
      chmodSync(join(f.ws, "prog"), 0o755);
      writeFileSync(join(f.ws, "evil.bin"), pad(bad, n));
      const evil = (await hashFile(join(f.ws, "evil.bin"))).digest;
      writeFileSync(
        join(f.ws, "rewrite.py"),
        "import mmap, sys\nnew = open(sys.argv[2], 'rb').read()\nwith open(sys.argv[1], 'r+b') as fh:\n  m = mmap.mmap(fh.fileno(), 0)\n  m[:] = new\n  m.flush()\n  m.close()\n",
      );
      const r = await runSh(
        f,
        makePolicy("denylist", [], [evil]),
        `rm -f m; ./prog && ./prog && ${f.python} rewrite.py prog evil.bin && ./prog m; echo status=$?`,
      );
      assert.equal(r.stdout.match(/ALLOWED-RAN/g)?.length, 2, r.stdout + r.stderr);
      assert.ok(!r.stdout.includes("DENIED-RAN") && !existsSync(join(f.ws, "m")), r.stdout);
      assert.match(r.stdout, /status=126/);
      assert.ok(
        refusals(r, evil).some((d) => d.route === "direct" && d.path.endsWith("/prog")),
        JSON.stringify(r.decisions),
      );
    },
  );
});

describe("routes around the marks", () => {
  test("a decision with a path of 4,090 bytes is journaled whole", { timeout: 30_000 }, async () => {
    // Its line carries the path in hex: over 8,192 bytes, which the helper used to drop.
    let dir = f.ws;
    const target = 4090 - "/denied".length;
    while (dir.length < target) {
      const room = target - dir.length - 1;
      dir = join(dir, "d".repeat(Math.min(200, room)));
      mkdirSync(dir);
    }
    copyFileSync(f.denied, join(dir, "denied"));
    const rel = dir.slice(f.ws.length + 1);
    const r = await runSh(f, policy, `cd ${rel} && ./denied; echo status=$?`);
    assert.match(r.stdout, /status=126/);
    const refused = refusals(r, f.deniedDigest);
    assert.equal(refused.length, 1, JSON.stringify(r.decisions.map((d) => [d.path.length, d.allowed])));
    const path = refused[0]?.path ?? "";
    assert.equal(path, join(dir, "denied"));
    assert.equal(path.length, 4090);
  });

  test("no block device node can be made in the sandbox (CAP_MKNOD)", { timeout: 30_000 }, async () => {
    // A node over the host's disk would be a write path under the gate (and the kernel raises no
    // permission event for device files). 254:0 is only a number: nothing is opened.
    const r = await runSh(f, policy, "mknod ./blk b 254 0; echo status=$?; ls -l ./blk");
    assert.match(r.stdout, /status=[1-9]/, r.stdout);
    assert.ok(!existsSync(join(f.ws, "blk")), "no node was made");
  });

  test("nothing but stdio is open when the command starts", { timeout: 30_000 }, async () => {
    // ls's own: stdio and the directory it lists (3); anything else came from outside.
    const r = await runSh(f, policy, "ls /proc/self/fd > fds.txt; sort -n fds.txt | tr '\\n' ' '");
    assert.equal(r.stdout.trim(), "0 1 2 3", r.stdout + r.stderr);
  });

  test("the kernel's settings (core_pattern) cannot be written", { timeout: 30_000 }, async () => {
    // The same value is written back, so a host where this is not refused is left as it was.
    const r = await runSh(
      f,
      policy,
      "cat /proc/sys/kernel/core_pattern > cp.txt && cat cp.txt > /proc/sys/kernel/core_pattern; echo status=$?",
    );
    assert.match(r.stdout, /status=[1-9]/, r.stdout);
    assert.match(r.stderr, /Read-only file system/, r.stderr);
  });

  test("/proc/self/map_files and /proc/self/fd/N run nothing denied", { timeout: 30_000 }, async () => {
    writeFileSync(
      join(f.ws, "mapfiles.py"),
      "import mmap, os\nfh = open('./denied', 'rb')\nm = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)\nrng = [l.split()[0] for l in open('/proc/self/maps') if l.rstrip().endswith('/denied')][0]\ntry:\n  os.execv('/proc/self/map_files/' + rng, ['x', 'm'])\nexcept OSError as e:\n  print('REFUSED', e.errno)\n",
    );
    const r = await runSh(
      f,
      policy,
      `rm -f m; ${f.python} mapfiles.py; exec 3<./denied; /proc/self/fd/3 m; echo fd=$?`,
    );
    assert.match(r.stdout, /REFUSED/, r.stdout + r.stderr);
    assert.match(r.stdout, /fd=126/, r.stdout);
    assert.ok(!r.stdout.includes("DENIED-RAN") && !existsSync(join(f.ws, "m")), r.stdout);
    assert.ok(refusals(r, f.deniedDigest).length >= 1, JSON.stringify(r.decisions));
  });
});
