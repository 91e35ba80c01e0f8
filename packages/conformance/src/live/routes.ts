// C8 live cases for the exec routes around the kernel's marks and the caches (sandbox-attest
// §5.5.5, §5.5.7), each a real process inside the reference host's gated sandbox (live/gated.ts),
// checked against its journal: the read-only cache, rewrites the kernel does not report (shared
// mappings, asynchronous I/O), /proc/self/map_files and /proc/self/fd, an inherited descriptor, a
// loop device, kernel.core_pattern, mounts, an over-long path, and a loader run as a program.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { makePolicy } from "@sbx/sandbox-attest/execpolicy";
import { gateUnavailableReason, hashFile } from "@sbx/host/gate";
import { sandboxUnavailableReason } from "@sbx/host/sandbox";
import type { LiveCase } from "../types.ts";
import { LOADER, outcome, PYTHON, ranDenied, refused, setup, sh, type Ctx } from "./gated.ts";

const fresh = (c: Ctx) => {
  rmSync(join(c.ws, "m"), { force: true });
};

/** Two files of one size, `prog.src` (allowed bytes) and `evil.bin` (denied bytes); returns evil's digest. */
async function sameSize(c: Ctx) {
  const ok = readFileSync(join(c.ws, "allowed"));
  const bad = readFileSync(join(c.ws, "denied"));
  const n = Math.max(ok.length, bad.length);
  // The same size for both, so a mapping can hold either (a program runs with zeros after its end).
  writeFileSync(join(c.ws, "prog.src"), Buffer.concat([ok, Buffer.alloc(n - ok.length)]));
  chmodSync(join(c.ws, "prog.src"), 0o755);
  writeFileSync(join(c.ws, "evil.bin"), Buffer.concat([bad, Buffer.alloc(n - bad.length)]));
  return (await hashFile(join(c.ws, "evil.bin"))).digest;
}

async function cacheCases(c: Ctx): Promise<LiveCase[]> {
  const policy = makePolicy("denylist", [], [c.denied]);
  const cached = await sh(c, policy, "cp /usr/bin/true t; for i in 1 2 3 4; do /usr/bin/true; ./t; done");
  const onRo = cached.decisions.filter((d) => d.path === "/usr/bin/true");
  const onRw = cached.decisions.filter((d) => d.path === "/work/t");
  const cachePassed =
    onRo.length === 4 &&
    onRw.length === 4 &&
    onRo.slice(1).every((d) => d.source === "cache") &&
    onRw.every((d) => d.source === "hash");
  const evil = await sameSize(c);
  writeFileSync(
    join(c.ws, "rewrite.py"),
    "import mmap, sys\nnew = open(sys.argv[2], 'rb').read()\nwith open(sys.argv[1], 'r+b') as fh:\n  m = mmap.mmap(fh.fileno(), 0)\n  m[:] = new\n  m.flush()\n  m.close()\n",
  );
  fresh(c);
  const re = await sh(
    c,
    makePolicy("denylist", [], [evil]),
    `cp prog.src prog && ./prog && ./prog && ${PYTHON} rewrite.py prog evil.bin && ./prog m; exit 0`,
  );
  const rePassed =
    (re.stdout.match(/ALLOWED-RAN/g)?.length ?? 0) === 2 &&
    !ranDenied(c, re) &&
    refused(re, evil).some((d) => d.path.endsWith("/prog"));
  return [
    outcome(
      "c8-live-cache-read-only",
      "only files on a read-only mount are cached; on a writable mount every exec is hashed",
      cachePassed,
      JSON.stringify(cached.decisions.map((d) => [d.path, d.source])),
    ),
    outcome(
      "c8-live-deny-mmap-rewrite",
      "an allowed file rewritten through a shared writable mapping (no modify event) is refused by its new content",
      rePassed,
      re.stdout,
    ),
  ];
}

/** Asynchronous I/O writes without the events the gate's cache relies on: it is refused outright. */
const AIO_PY = `import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
ctx = ctypes.c_ulong(0)
r = libc.syscall(206, 8, ctypes.byref(ctx))
print('io_setup', r, ctypes.get_errno())
params = ctypes.create_string_buffer(120)
r = libc.syscall(425, 8, params)
print('io_uring_setup', r, ctypes.get_errno())
`;

async function aioCase(c: Ctx): Promise<LiveCase> {
  const evil = await sameSize(c);
  writeFileSync(join(c.ws, "aio.py"), AIO_PY);
  fresh(c);
  const r = await sh(
    c,
    makePolicy("denylist", [], [evil, c.denied]),
    `cp prog.src prog && ./prog && ./prog && ${PYTHON} aio.py prog evil.bin; ./prog; exit 0`,
  );
  const refusedAio = /io_setup -1 1\n/.test(r.stdout) && /io_uring_setup -1 1\n/.test(r.stdout);
  const progs = r.decisions.filter((d) => d.path === "/work/prog");
  const passed =
    refusedAio &&
    (r.stdout.match(/ALLOWED-RAN/g)?.length ?? 0) === 3 &&
    progs.length === 3 &&
    progs.every((d) => d.allowed && d.source === "hash");
  return outcome(
    "c8-live-deny-aio-rewrite",
    "asynchronous I/O (io_setup, io_uring_setup) cannot rewrite an allowed file after its verdict: refused with EPERM, and every later exec is decided by content",
    passed,
    r.stdout + JSON.stringify(progs),
  );
}

const MAPFILES_PY =
  "import mmap, os\nfh = open('./denied', 'rb')\nm = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)\nrng = [l.split()[0] for l in open('/proc/self/maps') if l.rstrip().endswith('/denied')][0]\ntry:\n  os.execv('/proc/self/map_files/' + rng, ['x', 'm'])\nexcept OSError as e:\n  print('REFUSED', e.errno)\n";

async function procRoutes(c: Ctx): Promise<LiveCase[]> {
  const policy = makePolicy("denylist", [], [c.denied]);
  writeFileSync(join(c.ws, "mapfiles.py"), MAPFILES_PY);
  fresh(c);
  const mf = await sh(c, policy, `${PYTHON} mapfiles.py`);
  fresh(c);
  const fd = await sh(c, policy, "exec 3<./denied; /proc/self/fd/3 m; echo status=$?");
  return [
    outcome(
      "c8-live-deny-map-files",
      "a denied file mapped and run through /proc/self/map_files does not run",
      mf.stdout.includes("REFUSED") && !ranDenied(c, mf),
      mf.stdout + mf.stderr,
    ),
    outcome(
      "c8-live-deny-proc-fd",
      "a denied file run through /proc/self/fd/N is refused and journaled",
      /status=126/.test(fd.stdout) && !ranDenied(c, fd) && refused(fd, c.denied).length === 1,
      fd.stdout,
    ),
  ];
}

async function kernelRoutes(c: Ctx): Promise<LiveCase[]> {
  const policy = makePolicy("denylist", [], [c.denied]);
  const before = readFileSync("/proc/sys/kernel/core_pattern", "utf8");
  const sys = await sh(
    c,
    policy,
    "cat /proc/sys/kernel/core_pattern > cp.txt && echo '|/work/denied' > /proc/sys/kernel/core_pattern; echo status=$?",
  );
  const after = readFileSync("/proc/sys/kernel/core_pattern", "utf8");
  const nod = await sh(c, policy, "mknod ./blk b 254 0; echo status=$?");
  const loop = await sh(
    c,
    policy,
    "cp denied img; ls /dev/loop* 2>/dev/null && echo LOOP-VISIBLE; losetup -f --show img 2>/dev/null && echo ATTACHED; " +
      "mknod ./loop0 b 7 0 2>/dev/null && echo MADE; mknod ./ctl c 10 237 2>/dev/null && echo MADE; echo done",
  );
  const mountPy = `${PYTHON} -c 'import ctypes; c = ctypes.CDLL(None, use_errno=True); print("mount", c.mount(b"none", b".", b"tmpfs", 0, None) and ctypes.get_errno())'`;
  const mnt = await sh(c, policy, mountPy);
  return [
    outcome(
      "c8-live-deny-core-pattern",
      "kernel.core_pattern (a program the kernel runs outside the sandbox) cannot be written",
      /status=[1-9]/.test(sys.stdout) && before === after,
      sys.stdout + sys.stderr,
    ),
    outcome(
      "c8-live-deny-block-device",
      "no block device node can be made in the sandbox (a write path under the gate)",
      /status=[1-9]/.test(nod.stdout) && !existsSync(join(c.ws, "blk")),
      nod.stdout,
    ),
    outcome(
      "c8-live-deny-loop-device",
      "no loop device over a file: none is visible, none can be attached or made",
      /^done$/m.test(loop.stdout) && !/LOOP-VISIBLE|ATTACHED|MADE/.test(loop.stdout),
      loop.stdout,
    ),
    outcome(
      "c8-live-deny-mount",
      "no mount can be made (it would carry no mark)",
      /mount 1\b/.test(mnt.stdout),
      mnt.stdout,
    ),
  ];
}

/** A descriptor on the denied file, inherited by the caller of the host (fd 3, no close-on-exec). */
function inheritedCase(c: Ctx): LiveCase {
  const driver = fileURLToPath(new URL("./sandbox-fd-driver.ts", import.meta.url));
  const fd = openSync(join(c.ws, "denied"), "r");
  fresh(c);
  try {
    const r = spawnSync(process.execPath, ["--import", "tsx", driver, c.ws, "--exec", c.denied], {
      stdio: ["ignore", "pipe", "pipe", fd],
      encoding: "utf8",
      timeout: 60_000,
    });
    const line = r.stdout.trim().split("\n").pop() ?? "";
    let v: { hostReads: boolean; stdout: string; held: boolean };
    try {
      v = JSON.parse(line) as typeof v;
    } catch {
      return outcome("c8-live-deny-inherited-fd", "an inherited descriptor", false, r.stderr.slice(-300));
    }
    const passed =
      v.hostReads &&
      v.held &&
      v.stdout.includes("RAN") &&
      !v.stdout.includes("ESCAPE") &&
      !existsSync(join(c.ws, "m"));
    return outcome(
      "c8-live-deny-inherited-fd",
      "a descriptor on a denied file that the caller inherited cannot be executed inside (it is closed)",
      passed,
      JSON.stringify(v),
    );
  } finally {
    closeSync(fd);
  }
}

async function longPathCase(c: Ctx): Promise<LiveCase> {
  const policy = makePolicy("denylist", [], [c.denied]);
  // The host path stays under PATH_MAX; inside, the workspace is /work, so the path is shorter by
  // the difference and still over 4,000 bytes.
  let dir = c.ws;
  while (dir.length < 4090 - "/denied".length)
    mkdirSync((dir = join(dir, "d".repeat(Math.min(200, 4090 - "/denied".length - dir.length - 1)))));
  writeFileSync(join(dir, "denied"), readFileSync(join(c.ws, "denied")), { mode: 0o755 });
  const long = await sh(c, policy, `cd ${dir.slice(c.ws.length + 1)} && ./denied; exit 0`);
  const inside = "/work" + join(dir, "denied").slice(c.ws.length);
  return outcome(
    "c8-live-journal-long-path",
    `a decision whose path is ${inside.length} bytes long is journaled with that path`,
    refused(long, c.denied).some((d) => d.path === inside) && inside.length > 4000,
    JSON.stringify(long.decisions.map((d) => [d.path.length, d.allowed])),
  );
}

async function loaderCase(c: Ctx): Promise<LiveCase> {
  const policy = makePolicy("denylist", [], [c.denied]);
  const warm = "for i in 1 2 3 4 5; do /usr/bin/true; done";
  const loop = "i=0; while [ $i -lt 40 ]; do /usr/bin/true; i=$((i+1)); done";
  const base = await sh(c, policy, `${warm}; ${loop}`);
  const after = await sh(c, policy, `${warm}; ${LOADER} /usr/bin/true; ${loop}`);
  const pid = after.decisions.find((d) => d.route === "direct" && d.path.includes("ld-linux"))?.pid;
  const libc = after.decisions.some(
    (d) => d.pid === pid && d.route === "loader" && d.path.includes("libc.so"),
  );
  const extra = (after.stats?.permissionEvents ?? Infinity) - (base.stats?.permissionEvents ?? 0);
  return outcome(
    "c8-live-loader-per-process",
    "a loader run as a program has its masked libraries journaled and switches nobody else into a slower mode",
    libc && extra <= 12,
    `libc journaled: ${libc}; extra permission events: ${extra}`,
  );
}

/** routeBattery runs the route cases inside the gated sandbox; where it cannot run, one failing case says why. */
export async function routeBattery(): Promise<LiveCase[]> {
  const why = gateUnavailableReason() ?? sandboxUnavailableReason();
  if (why !== null) return [outcome("c8-live-routes", "the exec gate runs on this host", false, why)];
  const c = await setup("sbx-c8r-");
  try {
    return [
      ...(await cacheCases(c)),
      await aioCase(c),
      ...(await procRoutes(c)),
      ...(await kernelRoutes(c)),
      inheritedCase(c),
      await longPathCase(c),
      await loaderCase(c),
    ];
  } finally {
    rmSync(c.ws, { recursive: true, force: true });
  }
}
