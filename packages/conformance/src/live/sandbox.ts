// §5, §12 The escape battery: real processes inside the sandbox try each way out a unit has been
// known to take, and every one must fail while the attestation states the level the host provided.
// Each probe prints RAN first (so a probe that never ran cannot pass) and ESCAPE:… for anything that
// worked; the host also checks from outside what the probe could have changed. The conformance
// harness (C8 live) and packages/conformance/test/escape.test.ts run it.
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  openSync,
  closeSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
} from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { testKey } from "@sbx/wire";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { runScript, type RunUnitResult } from "@sbx/host/run";
import { makePolicy } from "@sbx/sandbox-attest/execpolicy";
import { cgroupProcs, sandboxUnavailableReason, startSandbox, type SandboxOptions } from "@sbx/host/sandbox";

/** One case's result (the conformance LiveCase shape). */
export interface EscapeCase {
  readonly id: string;
  readonly desc: string;
  readonly passed: boolean;
  readonly detail?: string;
}

/** The level a sandboxed runUnit interval provides (§9): isolated, metered, attested, journaled. */
export const SANDBOX_LEVEL = "S4";

/** inSandbox runs `/bin/sh -c script` in a fresh sandbox (@sbx/host runScript) and returns the run. */
export function inSandbox(script: string, o: Partial<SandboxOptions> = {}): Promise<RunUnitResult> {
  return runScript(script, { sandbox: o, hostKey: testKey("host") });
}

/** judge: the probe ran, nothing escaped, and the attestation states the level provided. */
function judge(id: string, desc: string, r: RunUnitResult, extra: string | null = null): EscapeCase {
  const out = r.stdout.toString();
  const stated = verifyAttestation(r.attestation).predicate.level;
  const problems = [
    out.includes("RAN")
      ? null
      : `the probe did not run (${JSON.stringify(r.outcome)}: ${r.stderr.toString().slice(0, 200)})`,
    out.includes("ESCAPE")
      ? out
          .split("\n")
          .filter((l) => l.includes("ESCAPE"))
          .join("; ")
      : null,
    stated === SANDBOX_LEVEL ? null : `attestation states ${stated}, the host provided ${SANDBOX_LEVEL}`,
    extra,
  ].filter((p): p is string => p !== null);
  return {
    id,
    desc,
    passed: problems.length === 0,
    ...(problems.length ? { detail: problems.join("; ") } : {}),
  };
}

// perl is in every Debian system (perl-base) and makes raw system calls: syscall(NR, args…).
const perl = (code: string) => `perl -e '${code}'`;

async function writeOutside(): Promise<EscapeCase> {
  const host = mkdtempSync(join(tmpdir(), "sbx-escape-host-"));
  const targets = ["/usr/sbx-x", "/etc/sbx-x", "/sbx-x", "/proc/sbx-x", `${host}/x`, "/bin/sbx-x"];
  const script = `echo RAN; for p in ${targets.join(" ")}; do (echo x > $p) 2>/dev/null && echo ESCAPE:wrote-$p; done; exit 0`;
  const r = await inSandbox(script);
  const leaked = [
    ...targets.filter((t) => t !== "/proc/sbx-x" && existsSync(t)),
    ...(existsSync(`${host}/x`) ? [host] : []),
  ];
  rmSync(host, { recursive: true, force: true });
  return judge(
    "sandbox-write-outside",
    "writing outside the workspace fails",
    r,
    leaked.length ? `host has ${leaked.join(", ")}` : null,
  );
}

async function readHost(): Promise<EscapeCase> {
  const script =
    "echo RAN; cat /etc/shadow 2>/dev/null && echo ESCAPE:shadow; ls -A /root 2>/dev/null | grep -q . && echo ESCAPE:root; " +
    "ls /etc | tr '\\n' ' ' | grep -qv '^group hostname hosts passwd resolv.conf $' && echo ESCAPE:etc-$(ls /etc | tr '\\n' ,); " +
    "ls / | grep -qE '^(home|root|var|opt|srv|boot|mnt|run|old_root|farm|lost\\+found)$' && echo ESCAPE:toplevel; exit 0";
  return judge(
    "sandbox-read-host",
    "the host's /etc/shadow, /root and other paths are not visible",
    await inSandbox(script),
  );
}

async function hostLoopback(): Promise<EscapeCase> {
  let connections = 0;
  const server = createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const script = `echo RAN; bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}' 2>/dev/null && echo ESCAPE:loopback; exit 0`;
  const r = await inSandbox(script);
  await new Promise((r2) => server.close(r2));
  return judge(
    "sandbox-host-loopback",
    "a listener on the host's loopback is unreachable",
    r,
    connections ? `${connections} connections reached the host` : null,
  );
}

async function outside(): Promise<EscapeCase> {
  // TEST-NET-1 (RFC 5737): the sandbox has no route, so connect fails at once; nothing is sent.
  const script =
    "echo RAN; t0=$(date +%s); bash -c 'exec 3<>/dev/tcp/192.0.2.1/80' 2>/tmp/e && echo ESCAPE:connected; " +
    "grep -q 'unreachable' /tmp/e || echo ESCAPE:not-unreachable-$(cat /tmp/e | tr ' ' _); [ $(( $(date +%s) - t0 )) -lt 3 ] || echo ESCAPE:slow; exit 0";
  return judge(
    "sandbox-no-network",
    "a non-local address is unreachable (ENETUNREACH, immediately)",
    await inSandbox(script),
  );
}

async function hostProcesses(): Promise<EscapeCase> {
  const victim = spawn("sleep", ["60"], { stdio: "ignore" });
  const pid = victim.pid ?? 0;
  try {
    const script =
      `echo RAN; [ -e /proc/${pid} ] && echo ESCAPE:sees-${pid}; kill -0 ${pid} 2>/dev/null && echo ESCAPE:signal; ` +
      `n=$(ls -d /proc/[0-9]* | wc -l); [ "$n" -le 6 ] || echo ESCAPE:sees-$n-processes; ` +
      perl(
        `syscall(101, 16, ${pid}, 0, 0) == -1 or print "ESCAPE:ptrace-host\\n"; syscall(101, 16, 1, 0, 0) == -1 or print "ESCAPE:ptrace-init\\n"`,
      ) +
      "; exit 0";
    const r = await inSandbox(script);
    const alive = victim.exitCode === null && victim.signalCode === null;
    return judge(
      "sandbox-host-processes",
      "host processes can be neither seen, signalled nor traced",
      r,
      alive ? null : "the host process died",
    );
  } finally {
    victim.kill("SIGKILL");
  }
}

async function mounts(): Promise<EscapeCase> {
  const script =
    "echo RAN; mkdir -p /tmp/m; mount -t tmpfs none /tmp/m 2>/dev/null && echo ESCAPE:mount; " +
    perl(
      'syscall(165, "none", "/tmp/m", "tmpfs", 0, 0) == -1 or print "ESCAPE:mount-syscall\\n"; ' +
        'syscall(428, -100, "/tmp", 1) == -1 or print "ESCAPE:open_tree\\n"; syscall(430, "tmpfs", 0) == -1 or print "ESCAPE:fsopen\\n"',
    ) +
    "; exit 0";
  return judge("sandbox-mount", "nothing can be mounted", await inSandbox(script));
}

async function procSys(): Promise<EscapeCase> {
  const before = readFileSync("/proc/sys/kernel/core_pattern", "utf8");
  const script =
    "echo RAN; (echo '|/tmp/x' > /proc/sys/kernel/core_pattern) 2>/dev/null && echo ESCAPE:core_pattern; " +
    "(echo 1 > /proc/sysrq-trigger) 2>/dev/null && echo ESCAPE:sysrq; ls /sys 2>/dev/null | grep -q . && echo ESCAPE:sys; exit 0";
  const r = await inSandbox(script);
  const after = readFileSync("/proc/sys/kernel/core_pattern", "utf8");
  return judge(
    "sandbox-proc-sys",
    "/proc/sys is read-only and /sys absent",
    r,
    before === after ? null : "core_pattern changed",
  );
}

function inheritedFd(): EscapeCase {
  const driver = fileURLToPath(new URL("./sandbox-fd-driver.ts", import.meta.url));
  const ws = mkdtempSync(join(tmpdir(), "sbx-escape-fd-"));
  const fd = openSync("/etc/shadow", "r");
  try {
    const r = spawnSync(process.execPath, ["--import", "tsx", driver, ws], {
      stdio: ["ignore", "pipe", "pipe", fd],
      encoding: "utf8",
      timeout: 60_000,
    });
    const line = r.stdout.trim().split("\n").pop() ?? "";
    let v: { hostReads: boolean; stdout: string; level: string };
    try {
      v = JSON.parse(line) as typeof v;
    } catch {
      return {
        id: "sandbox-inherited-fd",
        desc: "an inherited descriptor is closed",
        passed: false,
        detail: `driver: ${r.stderr.slice(-300)}`,
      };
    }
    const problems = [
      v.hostReads ? null : "the caller held no readable fd 3: the case proves nothing",
      v.stdout.includes("RAN") ? null : "the probe did not run",
      v.stdout.includes("ESCAPE") ? v.stdout.trim() : null,
      v.level === SANDBOX_LEVEL ? null : `stated ${v.level}`,
    ].filter((p): p is string => p !== null);
    return {
      id: "sandbox-inherited-fd",
      desc: "a descriptor the caller inherited (fd 3, no close-on-exec) is closed",
      passed: problems.length === 0,
      ...(problems.length ? { detail: problems.join("; ") } : {}),
    };
  } finally {
    closeSync(fd);
    rmSync(ws, { recursive: true, force: true });
  }
}

async function namespaces(): Promise<EscapeCase> {
  const script =
    "echo RAN; unshare -U true 2>/dev/null && echo ESCAPE:unshare-U; unshare -r true 2>/dev/null && echo ESCAPE:unshare-r; " +
    perl(
      'syscall(272, 0x10000000) == -1 or print "ESCAPE:unshare-syscall\\n"; syscall(56, 0x10000000|17, 0, 0, 0, 0) == -1 or print "ESCAPE:clone-newuser\\n"; ' +
        'my $ca = pack("Q11", 0x10000000, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0); my $r = syscall(435, $ca, 88); $r == 0 and exit 0; $r == -1 or print "ESCAPE:clone3-newuser\\n"',
    ) +
    "; exit 0";
  return judge("sandbox-user-namespace", "no user namespace can be created", await inSandbox(script));
}

async function kernel(): Promise<EscapeCase> {
  const script =
    "echo RAN; " +
    perl(
      'open(my $f, "<", "/bin/true"); syscall(313, fileno($f), "", 0) == -1 or print "ESCAPE:finit_module\\n"; ' +
        'syscall(175, 0, 0, "") == -1 or print "ESCAPE:init_module\\n"; syscall(246, 0, 0, 0, 0) == -1 or print "ESCAPE:kexec\\n"; ' +
        'syscall(321, 0, 0, 0) == -1 or print "ESCAPE:bpf\\n"; syscall(250, 0, 0) == -1 or print "ESCAPE:keyctl\\n"; ' +
        'my $p = "\\0" x 120; syscall(425, 8, $p) == -1 or print "ESCAPE:io_uring\\n"; my $c = "\\0" x 8; syscall(206, 8, $c) == -1 or print "ESCAPE:io_setup\\n"; ' +
        'syscall(135, 0x0040000) == -1 or print "ESCAPE:personality\\n"; ' +
        'my $x = "x"; ioctl(STDOUT, 0x5412, $x) and print "ESCAPE:tiocsti\\n"; $! == 1 or print "ESCAPE:tiocsti-not-eperm-$!\\n"',
    ) +
    "; exit 0";
  return judge(
    "sandbox-kernel",
    "modules, kexec, bpf, keyrings, async I/O, personality and TIOCSTI are refused",
    await inSandbox(script),
  );
}

async function hostUid(): Promise<EscapeCase> {
  const ws = mkdtempSync(join(tmpdir(), "sbx-escape-uid-"));
  const sb = startSandbox(
    ["/bin/sh", "-c", "sleep 0.5; echo RAN"],
    { workspace: ws, user: "root" },
    "ignore",
  );
  await sb.unitPid;
  const uids = new Map<number, string>();
  for (let i = 0; i < 20 && uids.size < 3; i++) {
    for (const pid of sb.cgroup.dirs.flatMap(cgroupProcs)) {
      const m = /^Uid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m?.[1] !== undefined) uids.set(pid, m[1].trim());
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  await sb.done;
  await sb.release();
  rmSync(ws, { recursive: true, force: true });
  const bad = [...uids].filter(([, u]) => u.split(/\s+/).some((x) => x === "0"));
  const passed = uids.size > 0 && bad.length === 0;
  return {
    id: "sandbox-host-uid",
    desc: "root inside the sandbox is never uid 0 on the host (/proc/PID/status from outside)",
    passed,
    ...(passed ? {} : { detail: uids.size === 0 ? "no process seen" : `host uids ${JSON.stringify(bad)}` }),
  };
}

/**
 * The gated sandbox's handshake (§5.5.5) passes two pipes into bwrap (fds 7 and 8); the inner stage
 * closes them before the command. From inside, bwrap's pid 1 holds only stdio and its own anonymous
 * inodes, and the probe's own descriptors are stdio or copies of it; from outside, bwrap's monitor holds no pipe or
 * file of the host beyond stdio and its status socket.
 */
async function handshakeFds(): Promise<EscapeCase> {
  const script =
    "echo RAN; o=$(readlink /proc/1/fd/1); e=$(readlink /proc/1/fd/2); find /proc/1/fd /proc/$$/fd -mindepth 1 -printf '%p %l\\n' > /tmp/fds; " +
    'while read p l; do case "$p:$l" in */[012]:*|*:anon_inode:*|*:"$o"|*:"$e") ;; *) echo "ESCAPE:$p=$l" ;; esac; done < /tmp/fds; ' +
    "for n in 7 8; do (echo x >&$n) 2>/dev/null && echo ESCAPE:write-fd$n; (echo x >/proc/1/fd/$n) 2>/dev/null && echo ESCAPE:proc1-fd$n; done; sleep 0.3; exit 0";
  const ws = mkdtempSync(join(tmpdir(), "sbx-escape-gate-"));
  const seen: string[] = [];
  const running = runScript(script, {
    sandbox: { workspace: ws },
    execPolicy: makePolicy("denylist"),
    hostKey: testKey("host"),
  });
  // Meanwhile, from the host: bwrap's monitor (the launcher's process once it exec'd bwrap).
  for (let i = 0; i < 20 && seen.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
    for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n)))
      try {
        if (readlinkSync(`/proc/${pid}/exe`) !== "/usr/bin/bwrap") continue;
        // The launcher is this process's child and became bwrap's monitor by exec.
        if (!readFileSync(`/proc/${pid}/stat`, "latin1").includes(`) S ${String(process.pid)} `)) continue;
        for (const fd of readdirSync(`/proc/${pid}/fd`))
          seen.push(`${fd}=${readlinkSync(`/proc/${pid}/fd/${fd}`)}`);
      } catch {
        // gone, or not ours
      }
  }
  const r = await running;
  rmSync(ws, { recursive: true, force: true });
  const host = seen.filter((s) => !/^(\d+=anon_inode:|[0-2]=|6=socket:|\d+=pipe:)/.test(s));
  return judge(
    "sandbox-handshake-fds",
    "the gate's handshake descriptors are closed: nothing of the host's is reachable through /proc/1/fd",
    r,
    r.gate?.held !== true ? "the run was not gated" : host.length ? `monitor holds ${host.join(", ")}` : null,
  );
}

/**
 * runEscapeBattery (§5, §12) runs every escape probe in a real sandbox and returns one case each.
 * Where no sandbox can be built, one failing case says why (a battery that cannot run never passes).
 */
export async function runEscapeBattery(): Promise<EscapeCase[]> {
  const why = sandboxUnavailableReason();
  if (why !== null)
    return [{ id: "sandbox-available", desc: "this host can build the sandbox", passed: false, detail: why }];
  const out: EscapeCase[] = [];
  for (const c of [
    writeOutside,
    readHost,
    hostLoopback,
    outside,
    hostProcesses,
    mounts,
    procSys,
    namespaces,
    kernel,
    hostUid,
    handshakeFds,
  ])
    out.push(await c());
  out.push(inheritedFd());
  return out;
}
