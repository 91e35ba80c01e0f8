// Exec notices (sandbox-attest §5.5.6): the second fanotify group reports every exec open in the
// sandbox that succeeded, in order, and nothing waits on it. An exec the kernel let through under
// one of the helper's ignore masks is journaled here, with the verdict the mask stands for
// (marks.c). Every other exec open was asked about, and journaled with its permission event
// (decide.c); so was an exec whose permission event set the mask, which route.c carries here.
//
// The kernel merges a notice into an identical one (same process, same file) still queued, so two
// execs of one file by one process must not both be waiting unread. They never are: only files that
// name an interpreter carry an ignore mask, so every exec ends with a permission event (its loader
// or a static program), and the notices are read before each permission event is answered.
#include <stdio.h>
#include <unistd.h>
#include "loop.h"
#include "route.h"

void on_notice(const struct fanotify_event_metadata *m) {
  struct stat st;
  struct verdict v;
  struct interp in;
  if (!(m->mask & (FAN_OPEN_EXEC | FAN_OPEN)) || is_ours(m->pid)) return (void)close(m->fd);
  if (FAULT("notice") || fstat(m->fd, &st) != 0) {
    // It cannot be told whether the kernel let this exec through under a mask: an exec might go
    // unjournaled, so the sandbox stops.
    dprintf(2, "execgate: notice: cannot stat; sandbox stopped\n");
    stop_sandbox(80);
  }
  if (!S_ISREG(st.st_mode) || carry_take(m->pid, &st)) return (void)close(m->fd);
  if ((m->mask & FAN_OPEN_EXEC) && marked_verdict(st.st_dev, st.st_ino, &v)) {
    int route = exec_route(m->pid, &st, m->fd, &in);
    counts.kernel_hits++;
    return journal_later(m->fd, 1, route, 'c', v.id, m->pid);
  }
  // A plain open (reported only while a loader runs as a program, watch.c) of a file the kernel
  // no longer asks about, by a process running a loader: the loader maps it, under the mask's
  // verdict. Files without such a mask were decided, and journaled, on their permission event.
  if (!(m->mask & FAN_OPEN_EXEC) && open_verdict(st.st_dev, st.st_ino, &v) && loader_opened(m->pid))
    return journal_later(m->fd, 1, ROUTE_LOADER, 'c', v.id, m->pid);
  close(m->fd);
}
