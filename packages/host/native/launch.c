/* sbx-launch (sandbox-attest §5.1): starts bubblewrap for one sandbox, as the reference host's
 * launcher. Run as root by the host; in order it
 *   1. joins the run's cgroups (its pid written to each cgroup.procs), so bwrap and the unit are
 *      limited and metered from their first instruction;
 *   2. closes every descriptor but 0, 1, 2 and the host's status and gate descriptors (6, 7, 8),
 *      without relying on anyone's close-on-exec flags;
 *   3. when the workspace's parents are closed to the sandbox's uid, or an image's rootfs is
 *      given, enters a private mount namespace and binds the workspace onto MOUNTPOINT and the
 *      rootfs onto ROOTFS_MNT, directories that uid can reach (§14.9);
 *   4. opens the seccomp program, the workspace and the generated /etc on descriptors 3, 4, 5,
 *      and the host paths of the extra binds (a grant's filesystem resources) on 9, 10, …;
 *   5. drops to the unprivileged host uid: no supplementary groups, gid and uid (real, effective,
 *      saved) set to it, the capability bounding set and the ambient set emptied, then every
 *      capability set zeroed; each step is checked, and read back before bwrap runs;
 *   6. execs bwrap with the arguments after "--" and an empty environment.
 * Any failure prints one line on stderr and exits 125 before bwrap runs (fail closed).
 * Usage: sbx-launch UID NCGROUPS CGROUP… SECCOMP WORKSPACE ETC MOUNTPOINT|"" ROOTFS|"" ROOTFS_MNT|""
 *        NBINDS BIND… -- BWRAP ARG…
 * Built with warnings as errors and hardening flags (build.sh). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXIT_SETUP 125
#define BIND_FD 9
#define MAX_BINDS 64

static void die(const char *what) {
  fprintf(stderr, "sbx-launch: %s: %s\n", what, strerror(errno));
  _exit(EXIT_SETUP);
}

static void fail(const char *what) {
  fprintf(stderr, "sbx-launch: %s\n", what);
  _exit(EXIT_SETUP);
}

/* parse_id reads a positive decimal id (never 0: the sandbox is never root on the host). */
static unsigned parse_id(const char *s) {
  char *end = NULL;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v == 0 || v > 0x7fffffffUL) fail("bad uid");
  return (unsigned)v;
}

static void join_cgroup(const char *dir) {
  char path[PATH_MAX];
  char pid[32];
  int n = snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  if (n < 0 || (size_t)n >= sizeof path) fail("cgroup path too long");
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die(path);
  n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  if (write(fd, pid, (size_t)n) != n) die(path);
  if (close(fd) != 0) die(path);
}

/* close_others closes every descriptor from 3 up but 6, 7 and 8 (close_range, Linux 5.9). */
static void close_others(void) {
  if (syscall(SYS_close_range, 3U, 5U, 0U) != 0) die("close_range");
  if (syscall(SYS_close_range, 9U, ~0U, 0U) != 0) die("close_range");
}

/* place opens `path` (read-only, inheritable) on descriptor `want`. */
static void place(const char *path, int flags, int want) {
  int fd = open(path, flags | O_RDONLY);
  if (fd < 0) die(path);
  if (fd != want) {
    if (dup2(fd, want) != want) die("dup2");
    if (close(fd) != 0) die("close");
  }
}

static void drop(unsigned id) {
  int last = -1;
  for (int c = 0; c < 64; c++) {
    if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0) break; /* EINVAL past the last capability */
    last = c;
    if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) die("PR_CAPBSET_DROP");
  }
  if (last < CAP_SETPCAP) fail("capability bounding set unreadable");
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) die("PR_CAP_AMBIENT_CLEAR_ALL");
  if (setgroups(0, NULL) != 0) die("setgroups");
  if (setresgid(id, id, id) != 0) die("setresgid");
  if (setresuid(id, id, id) != 0) die("setresuid");
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  memset(d, 0, sizeof d);
  if (syscall(SYS_capset, &h, d) != 0) die("capset");
  /* Read everything back: a drop that did not happen is a failure, not a warning. */
  uid_t r, e, s;
  gid_t gr, ge, gs;
  if (getresuid(&r, &e, &s) != 0 || r != id || e != id || s != id) fail("uid not dropped");
  if (getresgid(&gr, &ge, &gs) != 0 || gr != id || ge != id || gs != id) fail("gid not dropped");
  if (getgroups(0, NULL) != 0) fail("supplementary groups remain");
  memset(d, 0xff, sizeof d);
  if (syscall(SYS_capget, &h, d) != 0) die("capget");
  for (int i = 0; i < 2; i++)
    if (d[i].effective | d[i].permitted | d[i].inheritable) fail("capabilities remain");
  for (int c = 0; c <= last; c++)
    if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) != 0) fail("bounding set not empty");
  for (int c = 0; c <= last; c++)
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) != 0) fail("ambient set not empty");
}

int main(int argc, char **argv) {
  if (argc < 3) fail("usage: sbx-launch UID N CGROUP... SECCOMP WORKSPACE ETC MOUNTPOINT ROOTFS ROOTFS_MNT NBINDS BIND... -- BWRAP ARG...");
  unsigned id = parse_id(argv[1]);
  char *end = NULL;
  long n = strtol(argv[2], &end, 10);
  if (*end != '\0' || n < 0 || n > 16 || argc < 3 + n + 9) fail("bad arguments");
  int i = 3;
  for (long k = 0; k < n; k++) join_cgroup(argv[i++]);
  const char *seccomp = argv[i++];
  const char *ws = argv[i++];
  const char *etc = argv[i++];
  const char *mnt = argv[i++];
  const char *root = argv[i++];
  const char *rmnt = argv[i++];
  if ((root[0] == '\0') != (rmnt[0] == '\0')) fail("bad arguments");
  long nb = strtol(argv[i++], &end, 10);
  if (*end != '\0' || nb < 0 || nb > MAX_BINDS || argc < i + nb + 2) fail("bad arguments");
  char **binds = argv + i;
  i += (int)nb;
  if (strcmp(argv[i++], "--") != 0 || i >= argc) fail("bad arguments");
  close_others();
  if (mnt[0] != '\0' || root[0] != '\0') {
    if (unshare(CLONE_NEWNS) != 0) die("unshare");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("mount private");
  }
  if (mnt[0] != '\0') {
    if (mount(ws, mnt, NULL, MS_BIND, NULL) != 0) die("bind workspace");
    ws = mnt;
  }
  if (root[0] != '\0' && mount(root, rmnt, NULL, MS_BIND, NULL) != 0) die("bind rootfs");
  place(seccomp, 0, 3);
  place(ws, O_DIRECTORY, 4);
  place(etc, O_DIRECTORY, 5);
  for (long k = 0; k < nb; k++) place(binds[k], O_PATH, BIND_FD + (int)k);
  drop(id);
  char *envp[] = {NULL};
  execve(argv[i], argv + i, envp);
  die(argv[i]);
}
