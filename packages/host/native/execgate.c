// execgate: the kernel-facing half of the exec gate (sandbox-attest §5.5).
//
// It runs one command in a sandbox whose every exec is decided by content:
//   1. a fanotify group (FAN_CLASS_CONTENT) and a warden process that holds a second reference to
//      it, so the group outlives this helper: if the helper dies, pending permission events stay
//      pending (they are never auto-allowed) while the warden kills the sandbox;
//   2. a private mount namespace whose every mount (our copies, so the host's processes are never
//      affected) is marked FAN_OPEN_EXEC_PERM | FAN_OPEN_PERM; the workspace is a dedicated bind
//      mount;
//   3. the sandbox's first process is pid 1 of a new pid namespace (so the whole tree dies with it),
//      with PR_SET_PDEATHSIG(SIGKILL), vm.memfd_noexec=2, CAP_SYS_ADMIN & co. dropped and a seccomp
//      filter (no new user or mount namespace, no mount of any kind).
// Fail closed: every set-up call is checked, and one that fails stops the helper before the
// command runs; a build for an architecture the seccomp filter does not cover refuses to start.
// Decisions come from a stat-keyed cache (dev, ino, size, mtime, ctime); on a miss the Node side
// is asked over fds 3 (in) / 4 (out) and hashes the file. No answer within the timeout is DENY.
// This process never opens a file on a marked mount after marking (that would wait on itself).

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gate.h"
#include "loop.h"

static struct gate G;

#ifdef EXECGATE_FAULTS
int fault(const char *name) {
  const char *list = getenv("EXECGATE_FAULT");
  size_t n = strlen(name);
  for (const char *at = list; at && (at = strstr(at, name)); at += n)
    if ((at == list || at[-1] == ',') && (at[n] == 0 || at[n] == ',')) return 1;
  return 0;
}
#endif

static void die(const char *what) {
  dprintf(2, "execgate: %s: %s\n", what, strerror(errno));
  if (G.spid > 0) kill(G.spid, SIGKILL);
  _exit(70);
}

int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

// The warden: holds the fanotify group, watches the helper's heartbeat, kills the sandbox when the
// helper dies or stalls. It touches no file.
static void warden(int hb, pid_t helper, int stall_ms) {
  close(3);
  close(4);
  pid_t spid = 0;
  int sfd = -1;
  for (;;) {
    struct pollfd p = {hb, POLLIN, 0};
    int r = poll(&p, 1, stall_ms);
    if (r < 0 && errno == EINTR) continue;
    char buf[64];
    ssize_t n = r > 0 ? read(hb, buf, sizeof buf) : -1;
    if (r > 0 && n > 0) {
      // Messages: 'h' heartbeat, 'q' normal end, 'S' + pid (sent once, before any heartbeat).
      for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == 'q') _exit(0);
        if (buf[i] == 'S' && spid == 0 && i + (ssize_t)sizeof spid < n) {
          memcpy(&spid, buf + i + 1, sizeof spid);
          sfd = pidfd_open(spid);
          i += (ssize_t)sizeof spid;
        }
      }
      continue;
    }
    // EOF (the helper died) or silence past stall_ms (the helper stalled): fail closed.
    if (spid > 0) kill(spid, SIGKILL);
    if (r == 0) kill(helper, SIGKILL);
    if (sfd >= 0) {
      struct pollfd q = {sfd, POLLIN, 0};
      poll(&q, 1, 5000);
    }
    dprintf(2, "execgate warden: helper %s; sandbox killed\n", r == 0 ? "stalled" : "died");
    _exit(3);
  }
}

static const char *const pseudo_fs[] = {"proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "securityfs", "debugfs",
                                        "tracefs", "pstore", "bpf", "configfs", "fusectl", "binfmt_misc", "autofs", "efivarfs",
                                        "rpc_pipefs", "nsfs", NULL};

static int is_pseudo(const char *fs) {
  for (int i = 0; pseudo_fs[i]; i++)
    if (strcmp(fs, pseudo_fs[i]) == 0) return 1;
  return 0;
}

// Decodes mountinfo's octal escapes (\040 for a space) in place.
static void unescape(char *s) {
  char *o = s;
  for (; *s; s++) {
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] && s[3]) {
      *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 3;
    } else
      *o++ = *s;
  }
  *o = 0;
}

// Marks every mount of this (private) namespace; a mount that can hold executables and cannot be
// marked is fatal: the sandbox never starts unguarded.
static void mark_all_mounts(void) {
  // Through the host's /proc: the namespace's own /proc may be another pid namespace's.
  int mfd = openat(G.proc, "self/mountinfo", O_RDONLY | O_CLOEXEC);
  FILE *f = mfd < 0 ? NULL : fdopen(mfd, "r");
  if (!f) die("mountinfo");
  char *line = NULL;
  size_t cap = 0;
  // Permission events decide (and are journaled); the second group's notices journal the execs an
  // ignore mask let through unasked (notice.c).
  uint64_t mask = FAN_OPEN_EXEC_PERM | FAN_OPEN_PERM;
  // getline: a line of any length is read whole (a cut line would leave a mount unmarked).
  while (getline(&line, &cap, f) > 0) {
    char *save = NULL, *tok = strtok_r(line, " ", &save);
    char *mnt = NULL, *fs = NULL;
    for (int i = 0; tok; i++, tok = strtok_r(NULL, " ", &save)) {
      if (i == 4) mnt = tok;
      if (strcmp(tok, "-") == 0) {
        fs = strtok_r(NULL, " ", &save);
        break;
      }
    }
    if (!mnt || !fs) {
      errno = EINVAL;
      die("mountinfo line");
    }
    unescape(mnt);
    if (fanotify_mark(G.fan, FAN_MARK_ADD | FAN_MARK_MOUNT, mask, AT_FDCWD, mnt) == 0) {
      if (fanotify_mark(G.notes, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_EXEC, AT_FDCWD, mnt) != 0) die("fanotify_mark notices");
      watch_mount(mnt);
      G.marked++;
      continue;
    }
    if (is_pseudo(fs) || errno == ENOENT) continue;
    dprintf(2, "execgate: cannot mark %s (%s)\n", mnt, fs);
    die("fanotify_mark");
  }
  free(line);
  fclose(f);
}

// CAP_DAC_READ_SEARCH: open_by_handle_at reaches any inode through any mount, a writable one
// included; CAP_CHECKPOINT_RESTORE: /proc/PID/map_files; CAP_MKNOD: a block device node.
static const int dropped_caps[] = {21 /*SYS_ADMIN*/,    16 /*SYS_MODULE*/, 17 /*SYS_RAWIO*/,          19 /*SYS_PTRACE*/,
                                   25 /*SYS_TIME*/,     22 /*SYS_BOOT*/,   33 /*MAC_ADMIN*/,           32 /*MAC_OVERRIDE*/,
                                   39 /*BPF*/,          38 /*PERFMON*/,    2 /*DAC_READ_SEARCH*/,      40 /*CHECKPOINT_RESTORE*/,
                                   27 /*MKNOD*/};

// Each capability leaves the bounding set, and is read back as gone; any failure stops pid 1
// before the command runs.
static void drop_caps(void) {
  if (FAULT("keepcaps")) return; // tests: show that the seccomp filter refuses mounts on its own
  for (size_t i = 0; i < sizeof dropped_caps / sizeof dropped_caps[0]; i++) {
    int c = dropped_caps[i];
    if (FAULT("capdrop") || prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 || prctl(PR_CAPBSET_READ, c, 0, 0, 0) != 0) {
      dprintf(2, "execgate: drop capability %d: %s\n", c, strerror(errno));
      _exit(71);
    }
  }
}

// No new user or mount namespace inside the sandbox: a new mount namespace holds copies of the
// mounts, and a copy carries no fanotify mark, so an exec there would never be asked about. Without
// CAP_SYS_ADMIN only a new user namespace could make one, so unshare(2) and clone(2) with
// CLONE_NEWUSER or CLONE_NEWNS fail with EPERM, setns(2) too, and clone3(2), whose flags a filter
// cannot read, with ENOSYS (libc then falls back to clone). No mount of any kind either (mount,
// umount, pivot_root and the new mount API fail with EPERM): a new mount, of a loop device over a
// file say, would carry no mark. x86-64, x32 and i386 numbers; any other architecture is killed.
#if !defined(__x86_64__)
#define NO_FILTER 1 // this build has no filter for its own architecture: main() refuses to start
#endif
#define NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS)
enum { T_NO = 1000, T_NOSYS, T_FLAGS, T_ALLOW, T_KILL, T_I386 }; // jump targets, resolved below
struct rule {
  unsigned nr, to;
};
// Numbers from 403 up are shared by every architecture: clone3 435, open_tree 428, move_mount 429,
// fsopen 430, fsconfig 431, fsmount 432, fspick 433, mount_setattr 442, open_tree_attr 467.
#define NEW_MOUNT_API {428, T_NO}, {429, T_NO}, {430, T_NO}, {431, T_NO}, {432, T_NO}, {433, T_NO}, {442, T_NO}, {467, T_NO}
static const struct rule rules_x86_64[] = {{435, T_NOSYS}, {308, T_NO}, {272, T_FLAGS}, {56, T_FLAGS}, {165, T_NO} /*mount*/,
                                           {166, T_NO} /*umount2*/, {155, T_NO} /*pivot_root*/, NEW_MOUNT_API};
static const struct rule rules_i386[] = {{435, T_NOSYS},       {346, T_NO},         {310, T_FLAGS},
                                         {120, T_FLAGS},       {21, T_NO} /*mount*/, {22, T_NO} /*umount*/,
                                         {52, T_NO} /*umount2*/, {217, T_NO} /*pivot_root*/, NEW_MOUNT_API};

#define FMAX 64
struct prog {
  struct sock_filter f[FMAX];
  unsigned jt[FMAX], jf[FMAX]; // symbolic targets (T_*) or 0 for the next instruction
  unsigned n, at[T_I386 - T_NO + 1];
};
static void put(struct prog *p, struct sock_filter ins, unsigned jt, unsigned jf) {
  if (p->n == FMAX) _exit(71);
  p->jt[p->n] = jt;
  p->jf[p->n] = jf;
  p->f[p->n++] = ins;
}
static void label(struct prog *p, unsigned t) { p->at[t - T_NO] = p->n; }
static void rules(struct prog *p, const struct rule *r, size_t n) {
  put(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)), 0, 0);
  if (r == rules_x86_64) put(p, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~0x40000000u), 0, 0); // x32
  for (size_t i = 0; i < n; i++) put(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, r[i].nr, 0, 0), r[i].to, 0);
  put(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), 0, 0);
}

static void refuse_namespaces(void) {
  static struct prog p;
  put(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)), 0, 0);
  put(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 0), 0, T_I386);
  rules(&p, rules_x86_64, sizeof rules_x86_64 / sizeof rules_x86_64[0]);
  label(&p, T_I386);
  put(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 0), 0, T_KILL);
  rules(&p, rules_i386, sizeof rules_i386 / sizeof rules_i386[0]);
  label(&p, T_FLAGS);
  put(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])), 0, 0);
  put(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NS_FLAGS, 0, 0), T_NO, 0);
  label(&p, T_ALLOW);
  put(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), 0, 0);
  label(&p, T_NO);
  put(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM), 0, 0);
  label(&p, T_NOSYS);
  put(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS), 0, 0);
  label(&p, T_KILL);
  put(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS), 0, 0);
  // Resolve the symbolic jumps into forward offsets (every target lies after its jump).
  for (unsigned i = 0; i < p.n; i++) {
    unsigned *j[2] = {&p.jt[i], &p.jf[i]};
    __u8 *o[2] = {&p.f[i].jt, &p.f[i].jf};
    for (int k = 0; k < 2; k++) {
      if (*j[k] == 0) continue;
      unsigned to = p.at[*j[k] - T_NO];
      if (to <= i || to - i - 1 > 255) _exit(71);
      *o[k] = (__u8)(to - i - 1);
    }
  }
  struct sock_fprog prog = {.len = (unsigned short)p.n, .filter = p.f};
  if (FAULT("seccomp") || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    dprintf(2, "execgate: seccomp: %s\n", strerror(errno));
    _exit(71);
  }
}

// The kernel's settings under the sandbox's /proc are the host's (kernel.core_pattern names a
// program the kernel runs as host root, outside every mark): each is made read-only, as bubblewrap
// does, before the capabilities that could undo it are dropped.
static void proc_read_only(void) {
  static const char *const paths[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", NULL};
  for (int i = 0; paths[i]; i++) {
    if (access(paths[i], F_OK) != 0) continue;
    if (FAULT("procro") || mount(paths[i], paths[i], NULL, MS_BIND | MS_REC, NULL) != 0 ||
        mount(NULL, paths[i], NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
      dprintf(2, "execgate: read-only %s: %s\n", paths[i], strerror(errno));
      _exit(71);
    }
  }
}

// The sandbox's pid 1: dies with the helper, gets its own /proc, refuses executable memfds, loses
// the capabilities that could remount, unshare or trace its way out, then runs the command.
static void sandbox_init(int lifeline, char **argv) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(71);
  if (setpriority(PRIO_PROCESS, 0, G.nice) != 0) _exit(71);
  struct pollfd p = {lifeline, POLLIN, 0};
  if (poll(&p, 1, 0) != 0) _exit(71); // the helper is already gone
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
    dprintf(2, "execgate: mount /proc: %s\n", strerror(errno));
    _exit(71);
  }
  int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, "2", 1) != 1) {
    dprintf(2, "execgate: vm.memfd_noexec=2: %s\n", strerror(errno));
    _exit(71);
  }
  close(fd);
  proc_read_only();
  drop_caps();
  refuse_namespaces();
  if (G.cwd && chdir(G.cwd) != 0) _exit(72);
  // Nothing but stdio reaches the command, whatever close-on-exec flags others set: a descriptor
  // from outside is a way out (a directory's opens the host's tree).
  if (FAULT("closefds") || close_range(3, ~0U, 0) != 0) {
    dprintf(2, "execgate: close_range: %s\n", strerror(errno));
    _exit(71);
  }
  execvp(argv[0], argv);
  dprintf(2, "execgate: exec %s: %s\n", argv[0], strerror(errno));
  _exit(errno == EACCES || errno == EPERM ? 126 : 127);
}

static void start_sandbox(char **argv) {
  int life[2];
  if (pipe2(life, O_CLOEXEC) != 0) die("pipe");
  if (unshare(CLONE_NEWPID) != 0) die("unshare pid");
  pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    close(life[1]);
    sandbox_init(life[0], argv);
  }
  close(life[0]);
  G.lifeline = life[1];
  G.spid = pid;
  G.sfd = pidfd_open(pid);
  if (G.sfd < 0) die("pidfd_open");
  char msg[1 + sizeof(pid_t)];
  msg[0] = 'S';
  memcpy(msg + 1, &pid, sizeof pid);
  if (write(G.hb, msg, sizeof msg) != (ssize_t)sizeof msg) die("warden");
}

static void setup_namespace(void) {
  if (unshare(CLONE_NEWNS) != 0) die("unshare mount");
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("make-rprivate");
  if (G.workspace && mount(G.workspace, G.workspace, NULL, MS_BIND | MS_REC, NULL) != 0) die("bind workspace");
  // Read-only trees (--read-only): a bind of each onto itself, remounted read-only, so the files
  // under it are cacheable (marks.c). The copies are this namespace's; the host keeps its own.
  for (int i = 0; i < G.nro; i++) {
    if (mount(G.ro[i], G.ro[i], NULL, MS_BIND | MS_REC, NULL) != 0) die("bind read-only");
    if (mount(NULL, G.ro[i], NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) != 0) die("remount read-only");
  }
  // The host's /proc, kept before the sandbox mounts its own over it: event pids are host pids.
  G.proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (G.proc < 0) die("open /proc");
  if (G.enforce) mark_all_mounts();
}

// --attach PID: the sandbox was built by someone else (bubblewrap, say) and PID is a process of it
// whose mounts are final. The helper joins its mount namespace and marks every mount there, sets
// vm.memfd_noexec=2 in its pid namespace, and guards it as its own: the warden kills PID when the
// helper dies, and the run ends when PID exits. Capabilities, seccomp, /proc/sys and descriptors
// are then the builder's to restrict (sandbox-attest §5.5.5).
static void memfd_noexec_in(pid_t pid) {
  char p[48];
  snprintf(p, sizeof p, "%d/ns/pid", (int)pid);
  int ns = openat(G.proc, p, O_RDONLY | O_CLOEXEC);
  if (ns < 0) die("pid namespace");
  pid_t c = fork();
  if (c < 0) die("fork");
  if (c == 0) { // joins the namespace for its children; a grandchild writes the setting there
    if (setns(ns, CLONE_NEWPID) != 0) _exit(1);
    pid_t gc = fork();
    if (gc < 0) _exit(1);
    if (gc == 0) {
      int fd = openat(G.proc, "sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);
      _exit(fd >= 0 && write(fd, "2", 1) == 1 ? 0 : 1);
    }
    int st = 0;
    _exit(waitpid(gc, &st, 0) == gc && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1);
  }
  int st = 0;
  if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    errno = EPERM;
    die("vm.memfd_noexec=2 in the sandbox");
  }
  close(ns);
}

static void attach(void) {
  G.proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (G.proc < 0) die("open /proc");
  char p[48];
  snprintf(p, sizeof p, "%d/ns/mnt", (int)G.attach);
  int mnt = openat(G.proc, p, O_RDONLY | O_CLOEXEC);
  if (mnt < 0) die("mount namespace");
  G.spid = G.attach;
  G.sfd = pidfd_open(G.attach);
  if (G.sfd < 0) die("pidfd_open");
  memfd_noexec_in(G.attach);
  if (setns(mnt, CLONE_NEWNS) != 0) die("setns mount");
  close(mnt);
  if (G.enforce) mark_all_mounts();
  char msg[1 + sizeof(pid_t)];
  msg[0] = 'S';
  memcpy(msg + 1, &G.spid, sizeof G.spid);
  if (write(G.hb, msg, sizeof msg) != (ssize_t)sizeof msg) die("warden");
}

static void parse_args(int argc, char **argv, int *cmd) {
  G.timeout_ms = 5000;
  G.stall_ms = 2000;
  G.enforce = 1;
  G.use_cache = 1;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--") == 0) break;
    if (!v && strcmp(a, "--no-cache") && strcmp(a, "--no-gate")) goto usage;
    if (strcmp(a, "--node-pid") == 0) G.node_pid = atoi(v), i++;
    else if (strcmp(a, "--timeout-ms") == 0) G.timeout_ms = atoi(v), i++;
    else if (strcmp(a, "--stall-ms") == 0) G.stall_ms = atoi(v), i++;
    else if (strcmp(a, "--workspace") == 0) G.workspace = v, i++;
    else if (strcmp(a, "--cwd") == 0) G.cwd = v, i++;
    else if (strcmp(a, "--read-only") == 0 && G.nro < MAX_RO) G.ro[G.nro++] = v, i++;
    else if (strcmp(a, "--attach") == 0 && atoi(v) > 0) G.attach = atoi(v), i++;
    else if (strcmp(a, "--no-cache") == 0) G.use_cache = 0;
    else if (strcmp(a, "--no-gate") == 0) G.enforce = 0;
    else goto usage;
  }
  if (G.attach ? i + 1 != argc && i != argc : i + 1 >= argc) goto usage; // --attach takes no command
  *cmd = i + 1;
  return;
usage:
  dprintf(2, "usage: execgate [--node-pid P] [--timeout-ms T] [--stall-ms S] [--workspace DIR] [--cwd DIR] [--read-only DIR]… [--attach PID] [--no-cache] "
             "[--no-gate] -- command [args…]\n");
  _exit(64);
}

int main(int argc, char **argv) {
  int cmd = 0;
  parse_args(argc, argv, &cmd);
  if (geteuid() != 0) {
    dprintf(2, "execgate: needs root (fanotify permission events, namespaces)\n");
    return 77;
  }
#ifdef NO_FILTER
  if (1) {
#else
  if (FAULT("arch")) {
#endif
    dprintf(2, "execgate: no seccomp filter for this architecture; refusing to start\n");
    return 71;
  }
  if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) die("signal");
  // fds 3 and 4 are the Node side's: without them nobody answers or journals.
  if (fcntl(3, F_SETFD, FD_CLOEXEC) != 0 || fcntl(4, F_SETFD, FD_CLOEXEC) != 0) die("control fds");
  G.self = getpid();
  // Unlimited queue and marks: a dropped notice would be a missing journal line, and every allowed
  // inode may carry an ignore mask (marks.c).
  G.fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE | FAN_UNLIMITED_MARKS,
                        O_RDONLY | O_LARGEFILE | O_CLOEXEC);
  if (G.fan < 0) die("fanotify_init");
  // The notices (every exec open that succeeded, for the journal) go to a second group that nothing
  // waits on (loop.c); unlimited too, for the same reason.
  G.notes = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE,
                          O_RDONLY | O_LARGEFILE | O_CLOEXEC);
  if (G.notes < 0) die("fanotify_init notices");
  int hb[2];
  if (pipe2(hb, O_CLOEXEC) != 0) die("pipe");
  pid_t w = fork();
  if (w < 0) die("fork");
  if (w == 0) {
    close(hb[1]);
    warden(hb[0], G.self, G.stall_ms);
  }
  close(hb[0]);
  G.hb = hb[1];
  G.warden = w;
  // Processes wait in the kernel while this helper decides: it must not queue behind the load.
  errno = 0;
  G.nice = getpriority(PRIO_PROCESS, 0);
  if (errno != 0 || setpriority(PRIO_PROCESS, 0, -10) != 0) die("setpriority");
  if (G.attach) attach();
  else {
    setup_namespace();
    start_sandbox(argv + cmd);
  }
  return gate_loop(&G);
}
