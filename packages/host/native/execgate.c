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
//      with PR_SET_PDEATHSIG(SIGKILL), vm.memfd_noexec=2 and CAP_SYS_ADMIN & co. dropped.
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

static struct gate G;

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
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f) die("mountinfo");
  char line[4096];
  // Permission events decide (and are journaled); the second group's notices journal the execs an
  // ignore mask let through unasked (notice.c).
  uint64_t mask = FAN_OPEN_EXEC_PERM | FAN_OPEN_PERM;
  while (fgets(line, sizeof line, f)) {
    char *save = NULL, *tok = strtok_r(line, " ", &save);
    char *mnt = NULL, *fs = NULL;
    for (int i = 0; tok; i++, tok = strtok_r(NULL, " ", &save)) {
      if (i == 4) mnt = tok;
      if (strcmp(tok, "-") == 0) {
        fs = strtok_r(NULL, " ", &save);
        break;
      }
    }
    if (!mnt || !fs) continue;
    unescape(mnt);
    if (fanotify_mark(G.fan, FAN_MARK_ADD | FAN_MARK_MOUNT, mask, AT_FDCWD, mnt) == 0) {
      if (fanotify_mark(G.notes, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_EXEC, AT_FDCWD, mnt) != 0) die("fanotify_mark notices");
      G.marked++;
      continue;
    }
    if (is_pseudo(fs) || errno == ENOENT) continue;
    dprintf(2, "execgate: cannot mark %s (%s)\n", mnt, fs);
    die("fanotify_mark");
  }
  fclose(f);
}

static const int dropped_caps[] = {21 /*SYS_ADMIN*/, 16 /*SYS_MODULE*/, 17 /*SYS_RAWIO*/, 19 /*SYS_PTRACE*/, 25 /*SYS_TIME*/,
                                   22 /*SYS_BOOT*/, 33 /*MAC_ADMIN*/,  32 /*MAC_OVERRIDE*/, 39 /*BPF*/,      38 /*PERFMON*/};

// No new user or mount namespace inside the sandbox: a new mount namespace holds copies of the
// mounts, and a copy carries no fanotify mark, so an exec there would never be asked about. Without
// CAP_SYS_ADMIN only a new user namespace could make one, so unshare(2) and clone(2) with
// CLONE_NEWUSER or CLONE_NEWNS fail with EPERM, setns(2) too, and clone3(2), whose flags a filter
// cannot read, with ENOSYS (libc then falls back to clone). x86-64, x32 and i386 numbers.
#define NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS)
#define LD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
// At instruction `at`: if A == k go to instruction `to` (forward), else fall through.
#define IS(at, k, to) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (to) - (at) - 1, 0)
static void refuse_namespaces(void) {
  enum { I386 = 9, ALLOW = 15, FLAGS = 16, NO = 19, NOSYS = 20 }; // instruction indices
  struct sock_filter f[] = {
      /* 0 */ LD(arch),
      /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, I386 - 2),
      /* 2 */ LD(nr),
      /* 3 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~0x40000000u), // x32 shares these numbers
      /* 4 */ IS(4, 435, NOSYS),                                  // clone3
      /* 5 */ IS(5, 308, NO),                                     // setns
      /* 6 */ IS(6, 272, FLAGS),                                  // unshare
      /* 7 */ IS(7, 56, FLAGS),                                   // clone
      /* 8 */ RET(SECCOMP_RET_ALLOW),
      /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, ALLOW - 10),
      /* 10 */ LD(nr),
      /* 11 */ IS(11, 435, NOSYS),
      /* 12 */ IS(12, 346, NO),
      /* 13 */ IS(13, 310, FLAGS),
      /* 14 */ IS(14, 120, FLAGS),
      /* 15 */ RET(SECCOMP_RET_ALLOW),
      /* 16 */ LD(args[0]),
      /* 17 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NS_FLAGS, NO - 18, 0),
      /* 18 */ RET(SECCOMP_RET_ALLOW),
      /* 19 */ RET(SECCOMP_RET_ERRNO | EPERM),
      /* 20 */ RET(SECCOMP_RET_ERRNO | ENOSYS),
  };
  struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    dprintf(2, "execgate: seccomp: %s\n", strerror(errno));
    _exit(71);
  }
}

// The sandbox's pid 1: dies with the helper, gets its own /proc, refuses executable memfds, loses
// the capabilities that could remount, unshare or trace its way out, then runs the command.
static void sandbox_init(int lifeline, char **argv) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(71);
  setpriority(PRIO_PROCESS, 0, G.nice);
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
  for (size_t i = 0; i < sizeof dropped_caps / sizeof dropped_caps[0]; i++) prctl(PR_CAPBSET_DROP, dropped_caps[i], 0, 0, 0);
  refuse_namespaces();
  if (G.cwd && chdir(G.cwd) != 0) _exit(72);
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
  // The host's /proc, kept before the sandbox mounts its own over it: event pids are host pids.
  G.proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (G.proc < 0) die("open /proc");
  if (G.enforce) mark_all_mounts();
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
    else if (strcmp(a, "--no-cache") == 0) G.use_cache = 0;
    else if (strcmp(a, "--no-gate") == 0) G.enforce = 0;
    else goto usage;
  }
  if (i + 1 >= argc) goto usage;
  *cmd = i + 1;
  return;
usage:
  dprintf(2, "usage: execgate [--node-pid P] [--timeout-ms T] [--stall-ms S] [--workspace DIR] [--cwd DIR] [--no-cache] "
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
  signal(SIGPIPE, SIG_IGN);
  fcntl(3, F_SETFD, FD_CLOEXEC);
  fcntl(4, F_SETFD, FD_CLOEXEC);
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
  G.nice = getpriority(PRIO_PROCESS, 0);
  if (setpriority(PRIO_PROCESS, 0, -10) != 0) dprintf(2, "execgate: setpriority: %s\n", strerror(errno));
  setup_namespace();
  start_sandbox(argv + cmd);
  return gate_loop(&G);
}
