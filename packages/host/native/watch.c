// Processes running a loader as a program (sandbox-attest §5.5.5), tracked one by one. Such a
// process maps files without the kernel executing them, so every ELF file it opens must be decided
// and journaled (route loader). A file it opens that carries no ignore mask raises a permission
// event and is decided there (decide.c). A file that carries one (its content allowed, on a
// read-only mount: marks.c) raises none: while any loader runs as a program, the notice group also
// reports plain opens (FAN_OPEN), and such an open by a tracked process is journaled from its
// notice with the verdict the mask stands for (notice.c). Nobody else's masks, decisions or waits
// change: other processes' opens only add a notice nobody waits on, and only while a loader runs.
//
// A process is tracked from the exec of a loader it makes (or the first open of a loader process
// whose exec was not seen) until its executable is no longer that loader: checked at each batch of
// notices (loop.c). Its exec is allowed before the executable changes, and the same exec open
// raises a second permission event (FAN_OPEN_PERM) while it waits, so a batch of notices comes
// while the process still has its old executable: it keeps counting until its executable changes
// from that one (the exec completed, or it ended or ran something else after a failed exec).
// Before a process stops counting, the notices it queued are read (an exit raises no permission
// event that would read them first). A process forked from a tracked one runs the same loader: it
// is found by its first notice, and by a scan of the sandbox's processes before the notices are
// switched off.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include "loop.h"

#define TRACKED 256
#define MOUNTS 1024

static struct {
  pid_t pid;
  struct key loader; // the executable the process must still have to count
  struct key before; // its executable when its exec of the loader was allowed, while `execing`
  int execing;       // that exec has not been seen to complete
  int ended;         // it no longer runs the loader: dropped once its notices are read
} tracked[TRACKED];
static int ntracked, opens_on;
static int mounts[MOUNTS]; // O_PATH descriptors of the marked mounts (paths may since be covered)
static int nmounts;
static ino_t sandbox_ns;

void watch_mount(const char *path) {
  if (nmounts == MOUNTS || (mounts[nmounts] = open(path, O_PATH | O_CLOEXEC)) < 0) {
    dprintf(2, "execgate: cannot keep mount %s: %s\n", path, strerror(errno));
    _exit(70);
  }
  nmounts++;
}

// Adds or removes FAN_OPEN on every mount of the notice group; a failure stops the sandbox (a
// loader's mappings could go unjournaled).
static void opens(int on) {
  if (opens_on == on) return;
  char link[32];
  for (int i = 0; i < nmounts; i++)
    // Through the host's /proc: fanotify_mark takes no O_PATH descriptor itself, but its link.
    if (snprintf(link, sizeof link, "self/fd/%d", mounts[i]) < 0 || FAULT("watch") ||
        fanotify_mark(g->notes, (on ? FAN_MARK_ADD : FAN_MARK_REMOVE) | FAN_MARK_MOUNT, FAN_OPEN, g->proc, link) != 0) {
      dprintf(2, "execgate: notices of opens: %s; sandbox stopped\n", strerror(errno));
      stop_sandbox(81);
    }
  opens_on = on;
}

static int exe_key(pid_t pid, struct key *k) {
  char exe[32];
  struct stat st;
  snprintf(exe, sizeof exe, "%d/exe", (int)pid);
  if (fstatat(g->proc, exe, &st, 0) != 0) return 0;
  key_of(&st, k);
  return 1;
}

static int find(pid_t pid) {
  for (int i = 0; i < ntracked; i++)
    if (tracked[i].pid == pid) return i;
  return -1;
}

void loader_runs(pid_t pid, const struct key *loader) {
  int i = find(pid);
  if (i < 0) {
    if (ntracked == TRACKED) {
      dprintf(2, "execgate: more than %d loaders run as programs; sandbox stopped\n", TRACKED);
      stop_sandbox(81);
    }
    i = ntracked++;
  }
  tracked[i].pid = pid;
  tracked[i].loader = *loader;
  tracked[i].ended = 0;
  // Called at the exec's permission event, the process still has the executable it execs from.
  tracked[i].execing = exe_key(pid, &tracked[i].before) && !key_eq(&tracked[i].before, loader);
  opens(1);
}

// A process whose executable is a loader (its verdict says so) is tracked.
static int found(pid_t pid) {
  struct key k;
  struct verdict v;
  if (!exe_key(pid, &k) || !cache_get(&k, &v) || !v.loader) return 0;
  loader_runs(pid, &k);
  return 1;
}

// A tracked process counts until its executable changes; one already gone counts too (an exec
// raises a permission event before the executable changes, and the notices queued before it are
// read first, so a notice read after the process ended was made while it ran the loader).
int loader_opened(pid_t pid) {
  struct key k;
  int i = find(pid);
  if (i >= 0) return !exe_key(pid, &k) || key_eq(&k, &tracked[i].loader);
  return found(pid);
}

// Every process of the sandbox's pid namespace whose executable is a loader.
static void scan(void) {
  struct stat st;
  char ns[48];
  if (sandbox_ns == 0) {
    snprintf(ns, sizeof ns, "%d/ns/pid", (int)g->spid);
    if (fstatat(g->proc, ns, &st, 0) != 0) return; // pid 1 is gone: so is every process
    sandbox_ns = st.st_ino;
  }
  int fd = openat(g->proc, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  if (!d) {
    dprintf(2, "execgate: cannot list processes; sandbox stopped\n");
    stop_sandbox(81);
  }
  for (struct dirent *e; (e = readdir(d));) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0) continue;
    snprintf(ns, sizeof ns, "%ld/ns/pid", pid);
    if (fstatat(g->proc, ns, &st, 0) == 0 && st.st_ino == sandbox_ns && !is_ours((pid_t)pid)) found((pid_t)pid);
  }
  closedir(d);
}

int loaders_ended(void) {
  struct key k;
  int n = 0;
  for (int i = 0; i < ntracked; i++) {
    int alive = exe_key(tracked[i].pid, &k);
    if (alive && key_eq(&k, &tracked[i].loader)) tracked[i].execing = 0;
    else if (!alive || !tracked[i].execing || !key_eq(&k, &tracked[i].before)) tracked[i].ended = 1;
    n += tracked[i].ended;
  }
  return n;
}

void loaders_check(void) {
  if (ntracked == 0) return;
  for (int i = 0; i < ntracked;)
    if (!tracked[i].ended) i++;
    else tracked[i] = tracked[--ntracked];
  if (ntracked == 0) scan();
  if (ntracked == 0) opens(0);
}

int loaders_tracked(void) { return ntracked; }
