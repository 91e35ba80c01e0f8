// Open notices (sandbox-attest §5.5.6): the second fanotify group reports every open in the
// sandbox that succeeded, in order, and nothing waits on it. Each exec open is journaled here with
// the decision that let it through: the permission event's (carried by route.c) or, when the
// kernel did not ask, the verdict its ignore mask stands for (marks.c). A plain open of an ELF file
// by a process that runs a loader as its program is the loader mapping that file (route loader)
// and is journaled the same way; every other plain open is dropped, and a file that is not ELF is
// not reported again until it is modified.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include "loop.h"
#include "route.h"

static int is_ours(pid_t pid) { return pid == g->self || pid == g->node_pid || pid == g->warden; }

// An open no decision covers: the journal cannot say what ran, so the sandbox stops.
static void unattributed(const struct fanotify_event_metadata *m) {
  dprintf(2, "execgate: pid %d opened a file no decision covers; sandbox stopped\n", (int)m->pid);
  stop_sandbox(78);
}

// Whether `pid` runs a loader as its program: from its executable while it is still there (also
// right for a fork, whose exec was never seen), else from its last exec notice.
static int runs_loader(pid_t pid) {
  char exe[32];
  struct stat es;
  struct key k;
  struct verdict v;
  int loader = 0;
  snprintf(exe, sizeof exe, "%d/exe", (int)pid);
  if (fstatat(g->proc, exe, &es, 0) != 0) return runner_get(pid, &loader) && loader;
  key_of(&es, &k);
  return cache_get(&k, &v) && v.loader;
}

static void exec_notice(const struct fanotify_event_metadata *m, const struct stat *st) {
  struct verdict v;
  struct interp in = {0};
  int route;
  char src;
  if (!carry_take(m->pid, st, &route, &v, &src)) {
    if (!marked_verdict(st->st_dev, st->st_ino, 1, &v, &in)) unattributed(m);
    route = exec_route(m->pid, st, m->fd, &in);
    src = 'c';
    counts.kernel_hits++;
  }
  journal_line(m->fd, 1, route, src, v.id, m->pid);
  int loader = v.loader && route == ROUTE_DIRECT;
  runner_set(m->pid, loader);
  if (loader && !loader_seen) loaders_running();
}

static void open_notice(const struct fanotify_event_metadata *m, const struct stat *st) {
  struct verdict v;
  int route;
  char src;
  if (!is_elf(m->fd)) {
    ignore_opens(g->notes, m->fd, FAN_OPEN); // cleared when the file is modified
    return;
  }
  if (carry_take(m->pid, st, &route, &v, &src)) return journal_line(m->fd, 1, route, src, v.id, m->pid);
  // No process runs a loader before the first notice of a loader's direct exec, which precedes
  // every notice of the files it maps; ordinary programs' opens of libraries stop here.
  if (!loader_seen || !runs_loader(m->pid)) return;
  // Without a kept verdict the permission event found no loader behind this open (a pid reused
  // since its last exec notice): not a mapping by a loader.
  if (!marked_verdict(st->st_dev, st->st_ino, 0, &v, NULL)) return;
  counts.kernel_hits++;
  journal_line(m->fd, 1, ROUTE_LOADER, 'c', v.id, m->pid);
}

void on_notice(const struct fanotify_event_metadata *m) {
  struct stat st;
  if (!is_ours(m->pid) && fstat(m->fd, &st) == 0 && S_ISREG(st.st_mode)) {
    if (m->mask & FAN_OPEN_EXEC) exec_notice(m, &st);
    else open_notice(m, &st);
  }
  close(m->fd);
}
