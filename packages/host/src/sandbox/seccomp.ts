// §5.1, §12 The sandbox's seccomp filter, written as classic BPF (struct sock_filter: u16 code,
// u8 jt, u8 jf, u32 k; 8 bytes each, little-endian) and handed to bwrap with `--seccomp FD`.
// The filter checks the architecture first (any audit arch but x86-64 is killed, and so is the x32
// ABI), answers clone3 with ENOSYS (its flags lie in memory the filter cannot read; the C library
// falls back to clone), then refuses with EPERM the system calls a unit has no business making: new namespaces,
// mounts, ptrace and cross-process memory access, asynchronous I/O (io_setup/io_submit, io_uring),
// the kernel keyring, module and kexec loading, bpf, perf events, userfaultfd, file handles, and
// terminal injection (TIOCSTI, TIOCLINUX). `personality` is limited to PER_LINUX.
import { arch } from "node:os";
import { HostError } from "../errors.ts";

/** AUDIT_ARCH_X86_64 (linux/audit.h): EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE. */
export const AUDIT_ARCH_X86_64 = 0xc000003e;
/** Syscall numbers at or above this bit are the x32 ABI, which the filter refuses. */
const X32_SYSCALL_BIT = 0x40000000;
const EPERM = 1;
const ENOSYS = 38;
/** clone3 carries its flags in memory a filter cannot read: ENOSYS, so the C library falls back to clone. */
const NR_CLONE3 = 435;

// BPF opcodes (linux/filter.h, linux/bpf_common.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;

// struct seccomp_data offsets: nr, arch, instruction_pointer (u64), args[6] (u64 each).
const OFF_NR = 0;
const OFF_ARCH = 4;
const argLow = (i: number): number => 16 + 8 * i;

/** x86-64 system calls refused outright with EPERM, by name (numbers from asm/unistd_64.h). */
export const DENIED_X86_64: Readonly<Record<string, number>> = {
  ptrace: 101,
  process_vm_readv: 310,
  process_vm_writev: 311,
  kcmp: 312,
  pidfd_getfd: 438,
  mount: 165,
  umount2: 166,
  pivot_root: 155,
  chroot: 161,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
  open_tree_attr: 467,
  unshare: 272,
  setns: 308,
  io_setup: 206,
  io_destroy: 207,
  io_getevents: 208,
  io_submit: 209,
  io_cancel: 210,
  io_pgetevents: 333,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  add_key: 248,
  request_key: 249,
  keyctl: 250,
  init_module: 175,
  delete_module: 176,
  finit_module: 313,
  kexec_load: 246,
  kexec_file_load: 320,
  bpf: 321,
  perf_event_open: 298,
  userfaultfd: 323,
  name_to_handle_at: 303,
  open_by_handle_at: 304,
  fanotify_init: 300,
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  acct: 163,
  settimeofday: 164,
  clock_settime: 227,
  clock_adjtime: 305,
  adjtimex: 159,
  iopl: 172,
  ioperm: 173,
  quotactl: 179,
  quotactl_fd: 443,
  syslog: 103,
  uselib: 134,
  vhangup: 153,
  lookup_dcookie: 212,
};

const NR_CLONE = 56;
const NR_PERSONALITY = 135;
const NR_IOCTL = 16;
/** CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME (linux/sched.h). */
export const CLONE_NEW_MASK =
  0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80;
const PER_LINUX = 0;
const PERSONALITY_QUERY = 0xffffffff;
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;

type Insn = readonly [code: number, jt: number, jf: number, k: number];

const ld = (off: number): Insn => [LD_W_ABS, 0, 0, off];
const ret = (k: number): Insn => [RET_K, 0, 0, k];
const jeq = (k: number, jt: number, jf: number): Insn => [JEQ_K, jt, jf, k];

/** The instructions of the filter, in order (exported for tests that interpret it). */
export function filterInstructions(): Insn[] {
  const p: Insn[] = [ld(OFF_ARCH), jeq(AUDIT_ARCH_X86_64, 1, 0), ret(RET_KILL_PROCESS), ld(OFF_NR)];
  p.push([JGE_K, 0, 1, X32_SYSCALL_BIT], ret(RET_KILL_PROCESS));
  for (const nr of Object.values(DENIED_X86_64)) p.push(jeq(nr, 0, 1), ret(RET_ERRNO | EPERM));
  // EPERM here would not make glibc fall back (posix_spawn, hence make, would fail); ENOSYS does.
  p.push(jeq(NR_CLONE3, 0, 1), ret(RET_ERRNO | ENOSYS));
  // clone: refused when its flags ask for any new namespace (flags are args[0], an unsigned long;
  // every CLONE_NEW* bit lies in the low 32 bits).
  p.push(jeq(NR_CLONE, 0, 4), ld(argLow(0)), [JSET_K, 0, 1, CLONE_NEW_MASK], ret(RET_ERRNO | EPERM));
  p.push(ret(RET_ALLOW));
  // personality: PER_LINUX, or the query 0xffffffff, and nothing else.
  p.push(jeq(NR_PERSONALITY, 0, 5), ld(argLow(0)), jeq(PER_LINUX, 2, 0), jeq(PERSONALITY_QUERY, 1, 0));
  p.push(ret(RET_ERRNO | EPERM), ret(RET_ALLOW));
  // ioctl: no injection into a terminal (TIOCSTI) or the console (TIOCLINUX).
  p.push(
    jeq(NR_IOCTL, 0, 4),
    ld(argLow(1)),
    jeq(TIOCSTI, 1, 0),
    jeq(TIOCLINUX, 0, 1),
    ret(RET_ERRNO | EPERM),
  );
  p.push(ret(RET_ALLOW));
  return p;
}

/**
 * seccompProgram (§5.1) returns the compiled filter as bwrap's `--seccomp` reads it: the bytes of a
 * struct sock_filter array. Refuses (`SandboxUnavailable`) on a machine that is not x86-64: the
 * filter covers no other architecture, and a sandbox without it is not started.
 */
export function seccompProgram(machine: string = arch()): Buffer {
  if (machine !== "x64")
    throw new HostError("SandboxUnavailable", `no seccomp filter for architecture ${machine}`);
  const insns = filterInstructions();
  const out = Buffer.alloc(insns.length * 8);
  insns.forEach(([code, jt, jf, k], i) => {
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(jt, i * 8 + 2);
    out.writeUInt8(jf, i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
