// §5.1 The seccomp program, run by a literal classic-BPF interpreter written here (the kernel's
// rules for the few opcodes the filter uses), over system calls whose verdicts the spec fixes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { filterInstructions, seccompProgram, AUDIT_ARCH_X86_64 } from "../../src/sandbox/index.ts";
import { isHostError } from "../../src/errors.ts";

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const KILL = 0x80000000;

/** run interprets the filter over seccomp_data {nr, arch, args}. */
function run(nr: number, args: number[] = [], arch = AUDIT_ARCH_X86_64): number {
  const prog = filterInstructions();
  const word = (off: number): number => {
    if (off === 0) return nr >>> 0;
    if (off === 4) return arch >>> 0;
    const i = (off - 16) / 8;
    return (args[i] ?? 0) >>> 0;
  };
  let a = 0;
  for (let pc = 0; pc < prog.length;) {
    const [code, jt, jf, k] = prog[pc]!;
    if (code === 0x20) a = word(k);
    else if (code === 0x06) return k >>> 0;
    else if (code === 0x15) {
      pc += 1 + (a === k >>> 0 ? jt : jf);
      continue;
    } else if (code === 0x35) {
      pc += 1 + (a >= k >>> 0 ? jt : jf);
      continue;
    } else if (code === 0x45) {
      pc += 1 + ((a & k) !== 0 ? jt : jf);
      continue;
    } else throw new Error(`opcode ${code}`);
    pc++;
  }
  throw new Error("fell off the end");
}

test("ordinary calls are allowed; the dangerous ones are EPERM", () => {
  for (const [name, nr] of [
    ["read", 0],
    ["write", 1],
    ["openat", 257],
    ["execve", 59],
    ["fork", 57],
    ["memfd_create", 319],
  ] as const)
    assert.equal(run(nr), ALLOW, name);
  const denied = {
    ptrace: 101,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    move_mount: 429,
    fsopen: 430,
    open_tree: 428,
    unshare: 272,
    setns: 308,
    io_setup: 206,
    io_submit: 209,
    io_uring_setup: 425,
    keyctl: 250,
    add_key: 248,
    request_key: 249,
    init_module: 175,
    finit_module: 313,
    kexec_load: 246,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    open_by_handle_at: 304,
    process_vm_readv: 310,
  };
  for (const [name, nr] of Object.entries(denied)) assert.equal(run(nr), EPERM, name);
});

test("clone: threads and forks pass, any CLONE_NEW* flag is refused; clone3 is ENOSYS (the C library falls back to clone)", () => {
  assert.equal(run(56, [0x003d0f00]), ALLOW, "pthread_create's flags");
  assert.equal(run(56, [0x01200011]), ALLOW, "fork's flags");
  for (const f of [0x10000000, 0x20000000, 0x40000000, 0x00020000, 0x04000000, 0x08000000, 0x02000000, 0x80])
    assert.equal(run(56, [f | 17]), EPERM, `flag ${f.toString(16)}`);
  assert.equal(run(435), 0x00050000 | 38);
});

test("personality is limited to PER_LINUX (and the query)", () => {
  assert.equal(run(135, [0]), ALLOW);
  assert.equal(run(135, [0xffffffff]), ALLOW);
  assert.equal(run(135, [0x0040000]), EPERM, "ADDR_NO_RANDOMIZE");
  assert.equal(run(135, [0x0008]), EPERM);
});

test("TIOCSTI and TIOCLINUX are refused, other ioctls pass", () => {
  assert.equal(run(16, [1, 0x5412]), EPERM);
  assert.equal(run(16, [1, 0x541c]), EPERM);
  assert.equal(run(16, [1, 0x5401]), ALLOW, "TCGETS");
});

test("another architecture and the x32 ABI are killed; no filter exists for other machines", () => {
  assert.equal(run(0, [], 0x40000003), KILL, "i386");
  assert.equal(run(0, [], 0xc00000b7), KILL, "aarch64");
  assert.equal(run(0x40000000 + 1), KILL, "x32 write");
  assert.throws(
    () => seccompProgram("arm64"),
    (e) => isHostError(e, "SandboxUnavailable"),
  );
  const bytes = seccompProgram("x64");
  assert.equal(bytes.length, filterInstructions().length * 8);
  assert.equal(bytes.readUInt16LE(0), 0x20);
  assert.equal(bytes.readUInt32LE(4), 4, "the first instruction loads the arch");
});
