// C8 live cases for the exec routes around the kernel's marks and the caches (sandbox-attest
// §5.5.5, §5.5.7): each is a real process under the gate, checked against its journal. Imported by
// c08.ts (this file is not a class module of its own).
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { makePolicy, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import type { LiveCase } from "../types.ts";

type Gate = typeof import("@sbx/host/gate");
type Result = Awaited<ReturnType<Gate["runGated"]>>;

const LOADER = "/lib64/ld-linux-x86-64.so.2";

interface Ctx {
  readonly gate: Gate;
  readonly ws: string;
  readonly denied: Digest;
  readonly ok: Digest;
  readonly python: string;
  readonly loaders: Awaited<ReturnType<InstanceType<Gate["LoaderSet"]>["loadHost"]>>;
}

function compile(ws: string, name: string): string {
  const src = join(ws, `${name}.c`);
  writeFileSync(
    src,
    `#include <stdio.h>\nint main(int c,char**v){if(c>1){FILE*f=fopen(v[1],"w");if(f)fclose(f);}puts("${name.toUpperCase()}-RAN");return 0;}\n`,
  );
  const r = spawnSync("cc", ["-O1", "-o", join(ws, name), src], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cc: ${r.stderr}`);
  return join(ws, name);
}

function outcome(id: string, desc: string, passed: boolean, detail?: string): LiveCase {
  return { id, desc, passed, ...(passed || detail === undefined ? {} : { detail }) };
}

function sh(c: Ctx, policy: ExecPolicy, script: string, readOnly: readonly string[] = []): Promise<Result> {
  return c.gate.runGated({
    policy,
    command: ["/bin/sh", "-c", script],
    workspace: c.ws,
    loaders: c.loaders,
    readOnly,
  });
}

const refused = (r: Result, d: Digest) => r.decisions.filter((x) => x.digest === d && !x.allowed);
const ran = (c: Ctx, r: Result) => r.stdout.includes("DENIED-RAN") || existsSync(join(c.ws, "m"));

async function cacheCases(c: Ctx): Promise<LiveCase[]> {
  const policy = makePolicy("denylist", [], [c.denied]);
  const ro = join(c.ws, "ro");
  mkdirSync(ro);
  copyFileSync(join(c.ws, "allowed"), join(ro, "allowed"));
  const cached = await sh(c, policy, "for i in 1 2 3 4; do ./ro/allowed; ./allowed; done", [ro]);
  const onRo = cached.decisions.filter((d) => d.digest === c.ok && d.path.endsWith("/ro/allowed"));
  const onRw = cached.decisions.filter((d) => d.digest === c.ok && !d.path.endsWith("/ro/allowed"));
  const cachePassed =
    onRo.length === 4 &&
    onRw.length === 4 &&
    onRo.slice(1).every((d) => d.source === "cache") &&
    onRw.every((d) => d.source === "hash");
  // The same size for both, so a mapping can hold either (a program runs with zeros after its end).
  const ok = readFileSync(join(c.ws, "allowed"));
  const bad = readFileSync(join(c.ws, "denied"));
  const n = Math.max(ok.length, bad.length);
  writeFileSync(join(c.ws, "prog"), Buffer.concat([ok, Buffer.alloc(n - ok.length)]));
  chmodSync(join(c.ws, "prog"), 0o755);
  writeFileSync(join(c.ws, "evil.bin"), Buffer.concat([bad, Buffer.alloc(n - bad.length)]));
  const evil = (await c.gate.hashFile(join(c.ws, "evil.bin"))).digest;
  writeFileSync(
    join(c.ws, "rewrite.py"),
    "import mmap, sys\nnew = open(sys.argv[2], 'rb').read()\nwith open(sys.argv[1], 'r+b') as fh:\n  m = mmap.mmap(fh.fileno(), 0)\n  m[:] = new\n  m.flush()\n  m.close()\n",
  );
  rmSync(join(c.ws, "m"), { force: true });
  const re = await sh(
    c,
    makePolicy("denylist", [], [evil]),
    `./prog && ./prog && ${c.python} rewrite.py prog evil.bin && ./prog m; exit 0`,
  );
  const rePassed =
    (re.stdout.match(/ALLOWED-RAN/g)?.length ?? 0) === 2 &&
    !ran(c, re) &&
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

async function routeCases(c: Ctx): Promise<LiveCase[]> {
  const policy = makePolicy("denylist", [], [c.denied]);
  writeFileSync(
    join(c.ws, "mapfiles.py"),
    "import mmap, os\nfh = open('./denied', 'rb')\nm = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)\nrng = [l.split()[0] for l in open('/proc/self/maps') if l.rstrip().endswith('/denied')][0]\ntry:\n  os.execv('/proc/self/map_files/' + rng, ['x', 'm'])\nexcept OSError as e:\n  print('REFUSED', e.errno)\n",
  );
  rmSync(join(c.ws, "m"), { force: true });
  const mf = await sh(c, policy, `${c.python} mapfiles.py`);
  rmSync(join(c.ws, "m"), { force: true });
  const fd = await sh(c, policy, "exec 3<./denied; /proc/self/fd/3 m; echo status=$?");
  const sys = await sh(
    c,
    policy,
    "cat /proc/sys/kernel/core_pattern > cp.txt && cat cp.txt > /proc/sys/kernel/core_pattern; echo status=$?",
  );
  const nod = await sh(c, policy, "mknod ./blk b 254 0; echo status=$?");
  const mountPy = `${c.python} -c 'import ctypes; c = ctypes.CDLL(None, use_errno=True); print("mount", c.mount(b"none", b".", b"tmpfs", 0, None) and ctypes.get_errno())'`;
  const mnt = await sh(c, policy, mountPy);
  let dir = c.ws;
  while (dir.length < 4090 - "/denied".length)
    mkdirSync((dir = join(dir, "d".repeat(Math.min(200, 4090 - "/denied".length - dir.length - 1)))));
  copyFileSync(join(c.ws, "denied"), join(dir, "denied"));
  const long = await sh(c, policy, `cd ${dir.slice(c.ws.length + 1)} && ./denied; exit 0`);
  return [
    outcome(
      "c8-live-deny-map-files",
      "a denied file mapped and run through /proc/self/map_files does not run",
      mf.stdout.includes("REFUSED") && !ran(c, mf),
      mf.stdout + mf.stderr,
    ),
    outcome(
      "c8-live-deny-proc-fd",
      "a denied file run through /proc/self/fd/N is refused and journaled",
      /status=126/.test(fd.stdout) && !ran(c, fd) && refused(fd, c.denied).length === 1,
      fd.stdout,
    ),
    outcome(
      "c8-live-deny-core-pattern",
      "kernel.core_pattern (a program the kernel runs outside the sandbox) cannot be written",
      /status=[1-9]/.test(sys.stdout),
      sys.stdout + sys.stderr,
    ),
    outcome(
      "c8-live-deny-block-device",
      "no block device node can be made in the sandbox (a write path under the gate)",
      /status=[1-9]/.test(nod.stdout) && !existsSync(join(c.ws, "blk")),
      nod.stdout,
    ),
    outcome(
      "c8-live-deny-mount",
      "no mount can be made (it would carry no mark)",
      /mount 1\b/.test(mnt.stdout),
      mnt.stdout,
    ),
    outcome(
      "c8-live-journal-long-path",
      "a decision whose path is 4,090 bytes long is journaled with that path",
      refused(long, c.denied).some((d) => d.path === join(dir, "denied")),
      JSON.stringify(long.decisions.map((d) => [d.path.length, d.allowed])),
    ),
  ];
}

async function loaderCase(c: Ctx): Promise<LiveCase> {
  const policy = makePolicy("denylist", [], [c.denied]);
  const warm = "for i in 1 2 3 4 5; do /usr/bin/true; done";
  const loop = "i=0; while [ $i -lt 40 ]; do /usr/bin/true; i=$((i+1)); done";
  const base = await sh(c, policy, `${warm}; ${loop}`, ["/usr"]);
  const after = await sh(c, policy, `${warm}; ${LOADER} /usr/bin/true; ${loop}`, ["/usr"]);
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

/** routeBattery runs the route cases; where the gate cannot run, one failing case says why. */
export async function routeBattery(): Promise<LiveCase[]> {
  const gate = await import("@sbx/host/gate");
  const why = gate.gateUnavailableReason();
  if (why !== null) return [outcome("c8-live-routes", "the exec gate runs on this host", false, why)];
  const ws = mkdtempSync(join(tmpdir(), "sbx-c8r-"));
  try {
    const denied = (await gate.hashFile(compile(ws, "denied"))).digest;
    const ok = (await gate.hashFile(compile(ws, "allowed"))).digest;
    const python = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], {
      encoding: "utf8",
    }).stdout.trim();
    const c: Ctx = { gate, ws, denied, ok, python, loaders: await new gate.LoaderSet().loadHost() };
    return [...(await cacheCases(c)), ...(await routeCases(c)), await loaderCase(c)];
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}
