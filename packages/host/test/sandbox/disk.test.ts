// §5.3 Every writable place a unit sees is bounded by the kernel as it writes (issue 30, defect 3):
// the workspace (its own ext4 image, sandbox/disk.ts), /tmp and /dev/shm (tmpfs with a size), and
// no other mount is writable. A write past a bound fails with ENOSPC inside, the outcome records
// `limits.disk`, the host's free space drops by no more than the bound, and nothing the unit wrote
// is lost, a crash between the run and the write-back included.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { boundWorkspace, diskImagePath, isMountPoint } from "../../src/sandbox/disk.ts";
import { isHostError } from "../../src/errors.ts";
import { inSandbox } from "./fixture.ts";

const MiB = 1 << 20;
const hostFree = (p: string): number => {
  const s = statfsSync(p);
  return s.bfree * s.bsize;
};

// Each place gets 1 GiB written into it; dd says how far it got and why it stopped.
const FILL = (path: string) =>
  `dd if=/dev/zero of=${path} bs=1M count=1024 2>&1 | grep -c "No space left on device"; echo "@${path} $(stat -c %s ${path})"`;

test("1 GiB into a 64 MiB workspace, /tmp and /dev/shm: ENOSPC each time, limits.disk, the host's disk barely moves", async () => {
  const ws = mkdtempSync(join(tmpdir(), "sbx-disk-"));
  try {
    const before = hostFree(dirname(ws));
    let least = before;
    const poll = setInterval(() => (least = Math.min(least, hostFree(dirname(ws)))), 5);
    const r = await inSandbox(
      [FILL("/work/big"), FILL("/tmp/big"), FILL("/dev/shm/big"), "sleep 0.3"].join("; "),
      {
        workspace: ws,
        workspaceBytes: 64 * MiB,
        tmpBytes: 64 * MiB,
      },
    ).finally(() => clearInterval(poll));
    const out = r.stdout.toString();
    for (const p of ["/work/big", "/tmp/big", "/dev/shm/big"]) {
      const m = new RegExp(`^1\\n@${p} (\\d+)$`, "m").exec(out);
      assert.ok(m, `${p}: no ENOSPC in ${out}`);
      assert.ok(Number(m[1]) <= 64 * MiB, `${p}: ${m[1]} bytes written past the 64 MiB bound`);
      assert.ok(Number(m[1]) >= 60 * MiB, `${p}: only ${m[1]} bytes of 64 MiB writable`);
    }
    assert.equal(r.limits?.disk, true);
    assert.deepEqual(JSON.parse(JSON.stringify(verifyAttestation(r.attestation).predicate.outcome)), {
      status: "exited",
      exit_code: 0,
      limits: ["disk"],
    });
    // The tmpfs places hold memory, not disk; the workspace at most its bound, plus the image's own
    // structures, and twice that for the moment of the write-back.
    assert.ok(before - least <= 2 * 64 * MiB + 16 * MiB, `host free space dropped by ${before - least}`);
    assert.ok(before - hostFree(dirname(ws)) <= 64 * MiB + 4 * MiB);
    assert.equal(statSync(join(ws, "big")).size <= 64 * MiB, true);
    assert.equal(isMountPoint(ws), false);
    assert.equal(existsSync(diskImagePath(ws)), false);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test("no mount the unit sees is writable but the workspace, /tmp and /dev/shm", async () => {
  // Every mount point in the unit's own mountinfo, each tried by creating a file and a directory;
  // a host folder bound in (as a grant's /fs/data/** with read binds it) among them.
  const data = mkdtempSync(join(tmpdir(), "sbx-disk-data-"));
  chmodSync(data, 0o777);
  const r = await inSandbox(
    `while read -r _ _ _ _ m _; do m=$(printf '%b' "$m"); echo "tried $m"; if (: > "$m/.sbx-w") 2>/dev/null || mkdir "$m/.sbx-d" 2>/dev/null; then echo "writable $m"; fi
     done < /proc/self/mountinfo | sort -u; echo done`,
    { workspaceBytes: 8 * MiB, binds: [{ host: data, inside: "/data", writable: false }] },
  ).finally(() => rmSync(data, { recursive: true, force: true }));
  const out = r.stdout.toString();
  assert.match(out, /done\n$/);
  const writable = out
    .split("\n")
    .filter((l) => l.startsWith("writable "))
    .map((l) => l.slice(9));
  assert.deepEqual(writable.sort(), ["/dev/shm", "/tmp", "/work"]);
  // the system binds, /etc, /proc, /dev and its nodes, /dev/pts: all tried
  const tried = out.split("\n").filter((l) => l.startsWith("tried "));
  for (const m of [
    "/",
    "/usr",
    "/etc",
    "/proc",
    "/dev",
    "/dev/null",
    "/dev/pts",
    "/tmp",
    "/dev/shm",
    "/work",
    "/data",
  ])
    assert.ok(tried.includes(`tried ${m}`), `${m} not tried: ${out}`);
});

test("a host folder bound writable is refused DiskLimitUnavailable: it would have no disk bound", async () => {
  const data = mkdtempSync(join(tmpdir(), "sbx-disk-data-"));
  try {
    await assert.rejects(
      inSandbox(`head -c 1048576 /dev/zero > /data/fill`, {
        binds: [{ host: data, inside: "/data", writable: true }],
      }),
      (e: unknown) => isHostError(e) && e.code === "DiskLimitUnavailable" && e.message.includes("/data"),
    );
    assert.equal(existsSync(join(data, "fill")), false, "nothing ran");
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
});

test("what the workspace held is there inside, what the unit wrote is there after, within the bound", async () => {
  const ws = mkdtempSync(join(tmpdir(), "sbx-disk-"));
  try {
    writeFileSync(join(ws, "held"), "x".repeat(3 * MiB));
    const r = await inSandbox(
      `cat held | wc -c; dd if=/dev/zero of=more bs=1M count=64 2>&1 | grep -c "No space left on device"; echo kept > kept`,
      {
        workspace: ws,
        workspaceBytes: 16 * MiB,
      },
    );
    assert.match(r.stdout.toString(), /^3145728\n1\n$/);
    // what it held counts: 16 MiB in all
    assert.ok(statSync(join(ws, "more")).size <= 13 * MiB);
    assert.equal(readFileSync(join(ws, "held"), "utf8").length, 3 * MiB);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test("a file the unit did not touch comes back as it was: same inode, times to the nanosecond, not journaled", async () => {
  const ws = mkdtempSync(join(tmpdir(), "sbx-disk-"));
  try {
    mkdirSync(join(ws, "sub"));
    for (const f of ["kept", "sub/kept", "rewritten", "gone"]) writeFileSync(join(ws, f), `${f}\n`);
    // The first run hands the workspace to the sandbox's user (a new owner, so a new ctime on every
    // file): that is the host's doing, not the unit's, and is not journaled.
    const first = await inSandbox("true", { workspace: ws });
    assert.deepEqual(
      first.journal.events.filter((e) => e.type === "file.write"),
      [],
      "the hand-over is not a write",
    );
    const before = (f: string) => statSync(join(ws, f), { bigint: true });
    const was = { kept: before("kept"), sub: before("sub/kept") };
    const r = await inSandbox("printf 'REWRITTEN\\n' > rewritten; rm gone; echo new > made", {
      workspace: ws,
    });
    assert.deepEqual(r.outcome, { status: "exited", exit_code: 0 });
    for (const [f, st] of [
      ["kept", was.kept],
      ["sub/kept", was.sub],
    ] as const) {
      const now = before(f);
      assert.equal(now.ino, st.ino, `${f}: the same inode`);
      assert.equal(now.mtimeNs, st.mtimeNs, `${f}: the same modification time, to the nanosecond`);
      assert.equal(now.ctimeNs, st.ctimeNs, `${f}: not changed at all`);
    }
    assert.equal(readFileSync(join(ws, "rewritten"), "utf8"), "REWRITTEN\n");
    assert.equal(readFileSync(join(ws, "made"), "utf8"), "new\n");
    assert.equal(existsSync(join(ws, "gone")), false);
    const written = r.journal.events
      .filter((e) => e.type === "file.write")
      .map((e) => (e as { path: string }).path)
      .sort();
    assert.deepEqual(written, ["made", "rewritten"], "only what the unit wrote is journaled");
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test("an image left by a crash before the write-back is written back by the next sandbox: nothing lost", () => {
  const ws = mkdtempSync(join(tmpdir(), "sbx-disk-"));
  try {
    writeFileSync(join(ws, "old"), "old\n");
    const b = boundWorkspace(ws, 8 * MiB, 65534);
    writeFileSync(join(ws, "written"), "during the run\n");
    // The host dies here: its mount goes with it (as at a reboot), the image stays beside.
    execFileSync("umount", [ws]);
    assert.equal(existsSync(join(ws, "written")), false);
    assert.equal(existsSync(b.image), true);
    const again = boundWorkspace(ws, 8 * MiB, 65534);
    assert.equal(readFileSync(join(ws, "written"), "utf8"), "during the run\n");
    again.release();
    assert.equal(readFileSync(join(ws, "written"), "utf8"), "during the run\n");
    assert.equal(readFileSync(join(ws, "old"), "utf8"), "old\n");
    assert.equal(existsSync(b.image), false);
  } finally {
    if (isMountPoint(ws)) execFileSync("umount", [ws]);
    rmSync(diskImagePath(ws), { force: true });
    rmSync(ws, { recursive: true, force: true });
  }
});

test("a workspace a live sandbox holds is refused WorkspaceBusy; one whose host died is written back", async () => {
  const ws = mkdtempSync(join(tmpdir(), "sbx-disk-"));
  try {
    const first = inSandbox("echo up > up; sleep 1", { workspace: ws, workspaceBytes: 4 * MiB });
    while (!existsSync(join(ws, "up"))) await new Promise((r) => setTimeout(r, 10));
    await assert.rejects(inSandbox("true", { workspace: ws, workspaceBytes: 4 * MiB }), (e) =>
      isHostError(e, "WorkspaceBusy"),
    );
    await first;
    // A host that died with the image mounted (no sandbox holds it any more): written back, not refused.
    boundWorkspace(ws, 4 * MiB, 65534);
    writeFileSync(join(ws, "late"), "late\n");
    boundWorkspace(ws, 4 * MiB, 65534).release();
    assert.equal(readFileSync(join(ws, "late"), "utf8"), "late\n");
    assert.equal(readFileSync(join(ws, "up"), "utf8"), "up\n");
  } finally {
    if (isMountPoint(ws)) execFileSync("umount", [ws]);
    rmSync(diskImagePath(ws), { force: true });
    rmSync(ws, { recursive: true, force: true });
  }
});

test("a workspace that is a mount point of its own is refused DiskLimitUnavailable, never run unbounded", () => {
  const ws = mkdtempSync(join(tmpdir(), "sbx-disk-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", ws]);
  try {
    assert.throws(
      () => boundWorkspace(ws, 4 * MiB, 65534),
      (e) => isHostError(e, "DiskLimitUnavailable"),
    );
  } finally {
    execFileSync("umount", [ws]);
    rmSync(ws, { recursive: true, force: true });
  }
});

test("what the unit made comes back whole: a tree past PATH_MAX, a FIFO, links, a name that is not text, modes and times", async () => {
  const ws = mkdtempSync(join(tmpdir(), "sbx-disk-"));
  try {
    // 30 levels of 200-byte names: 6 KB of path, past PATH_MAX (4096), which cp and tar refuse.
    const r = await inSandbox(
      `set -e; cd /work; perl -e 'my $d = "d" x 200; for (1 .. 30) { mkdir $d or die; chdir $d or die } open my $f, ">", "f" or die; print $f "deep\\n"'
       echo one > a; ln a b; ln -s a c; mkfifo p; printf x > "$(printf 'n\\377')"
       chmod 751 a; touch -h -d @1000000000 c; echo ok`,
      { workspace: ws },
    );
    assert.match(r.stdout.toString(), /ok/);
    assert.equal(isMountPoint(ws), false);
    assert.equal(existsSync(diskImagePath(ws)), false);
    // Read back by a program that walks relative to its cwd (no path it hands the kernel is long).
    const deep = execFileSync(
      "/usr/bin/perl",
      [
        "-e",
        'chdir $ARGV[0] or die; for (1 .. 30) { chdir "d" x 200 or die } open my $f, "<", "f" or die; print <$f>',
        ws,
      ],
      { encoding: "utf8" },
    );
    assert.equal(deep, "deep\n");
    const a = statSync(join(ws, "a"));
    assert.equal(a.mode & 0o7777, 0o751);
    assert.equal(a.ino, statSync(join(ws, "b")).ino, "a hard link stays one inode");
    assert.equal(a.nlink, 2);
    assert.equal(execFileSync("/usr/bin/readlink", [join(ws, "c")], { encoding: "utf8" }), "a\n");
    assert.equal(
      execFileSync("/usr/bin/stat", ["-c", "%Y", "--", join(ws, "c")], { encoding: "utf8" }),
      "1000000000\n",
    );
    assert.equal(
      execFileSync("/usr/bin/stat", ["-c", "%F", "--", join(ws, "p")], { encoding: "utf8" }),
      "fifo\n",
    );
    assert.equal(readFileSync(Buffer.from(`${ws}/n\xff`, "latin1")).toString(), "x");
  } finally {
    execFileSync("/bin/rm", ["-rf", "--", ws]);
  }
});
