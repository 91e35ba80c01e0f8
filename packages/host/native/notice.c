// Exec notices (sandbox-attest §5.5.6): the second fanotify group reports every exec open in the
// sandbox that succeeded, in order, and nothing waits on it. Each is journaled here with the
// decision that let it through: the permission event's (carried by route.c) or, when the kernel
// did not ask, the verdict its ignore mask stands for (marks.c).
//
// The kernel merges a notice into an identical one (same process, same file) still queued, so two
// execs of one file by one process must not both be waiting unread. They never are: only files that
// name an interpreter carry an ignore mask, so every exec ends with a permission event (its loader
// or a static program), and the notices are read before each permission event is answered.
#include <stdio.h>
#include <unistd.h>
#include "loop.h"
#include "route.h"

static int is_ours(pid_t pid) { return pid == g->self || pid == g->node_pid || pid == g->warden; }

// An exec no decision covers: the journal cannot say what ran, so the sandbox stops.
static void unattributed(const struct fanotify_event_metadata *m) {
  dprintf(2, "execgate: pid %d executed a file no decision covers; sandbox stopped\n", (int)m->pid);
  stop_sandbox(78);
}

void on_notice(const struct fanotify_event_metadata *m) {
  struct stat st;
  struct verdict v;
  struct interp in = {0};
  int route;
  char src;
  if ((m->mask & FAN_OPEN_EXEC) && !is_ours(m->pid) && fstat(m->fd, &st) == 0 && S_ISREG(st.st_mode)) {
    if (!carry_take(m->pid, &st, &route, &v, &src)) {
      if (!marked_verdict(st.st_dev, st.st_ino, &v, &in)) unattributed(m);
      route = exec_route(m->pid, &st, m->fd, &in);
      src = 'c';
      counts.kernel_hits++;
    }
    journal_line(m->fd, 1, route, src, v.id, m->pid);
  }
  close(m->fd);
}
