// The exec gate's event loop (sandbox-attest §5.5): answers and journals every permission event
// (decide.c), journals the execs the kernel let through under an ignore mask from their notices
// (notice.c), heartbeats the warden, and ends when the sandbox's pid 1 exits. Protocol (text lines):
//   helper → node (fd 4): r <spid> <marked> | m <id> <path> <key…> | d <allow> <route> <src> <vid>
//                         <pid> <hexpath> | x <code> <signal> <hits> <misses> <denies> <timeouts> <cpu_us>
//                         <kernel_hits> <marks> <permission>
//   node → helper (fd 3): v <id> <allow> <elf> <loader> | stop | flush
// <key…> is dev ino size mtime_s mtime_ns ctime_s ctime_ns; src is c (cache), n (node), t (timeout);
// <vid> is the id of the v line whose verdict decided (0 for a timeout).
//
// Two fanotify groups: `fan` holds the permission events, which a process waits on, and is read at
// once; `notes` holds the notices of exec opens that succeeded, which nothing waits on, and is read
// in batches (NOTICE_MS), and always before a batch of permission events, so that every notice
// queued before a permission event is handled before it. A warm exec raises one permission event,
// at the end of its chain (its loader's, or a static program's; marks.c), and one notice.

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "loop.h"

#define NOTICE_MS 10
#define PERM_MASK (FAN_OPEN_EXEC_PERM | FAN_OPEN_PERM)

struct gate *g;
struct counts counts;
static int64_t notices_at;

int is_ours(pid_t pid) { return pid == g->self || pid == g->node_pid || pid == g->warden; }

static void on_event(const struct fanotify_event_metadata *m) {
  if (m->vers != FANOTIFY_METADATA_VERSION) stop_sandbox(73);
  if (m->mask & FAN_Q_OVERFLOW) {
    // Events were dropped: decisions and journal lines would be missing. Fail closed.
    dprintf(2, "execgate: fanotify queue overflow; sandbox stopped\n");
    stop_sandbox(78);
  }
  if (m->fd < 0) return;
  if (m->mask & PERM_MASK) on_permission(m);
  else on_notice(m);
}

static void handle(const char *buf, ssize_t n) {
  const struct fanotify_event_metadata *m = (const void *)buf;
  for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) on_event(m);
}

// A read that did not fill the buffer took everything queued at that moment; only a full one is
// read again (what comes later wakes poll).
#define FILLED(n, buf) ((size_t)(n) > sizeof(buf) - 4096)

static void read_notices(void) {
  static char buf[65536] __attribute__((aligned(8)));
  ssize_t n;
  do {
    n = read(g->notes, buf, sizeof buf);
    if (n > 0) handle(buf, n);
  } while (n > 0 && FILLED(n, buf));
  // After the batch, and for a process that stopped running its loader, after what it queued before.
  if (loaders_ended())
    do {
      n = read(g->notes, buf, sizeof buf);
      if (n > 0) handle(buf, n);
    } while (n > 0 && FILLED(n, buf));
  loaders_check();
  notices_at = now_ms() + NOTICE_MS;
}

static void read_notices_now(void) {
  read_notices();
  journal_now();
}

// Each batch of permission events after the notices queued before it: a process's notices precede
// its permission event, and the event's route may depend on them (an interpreter's exec follows
// its script's).
static void read_events(void) {
  static char buf[16384] __attribute__((aligned(8)));
  ssize_t n;
  do {
    n = read(g->fan, buf, sizeof buf);
    if (n <= 0) return;
    read_notices();
    handle(buf, n);
    journal_now(); // after the answers: the lines of the notices first, then of the events
  } while (FILLED(n, buf));
}

static void on_line(char *line) {
  int id, a, e, l;
  if (sscanf(line, "v %d %d %d %d", &id, &a, &e, &l) == 4 && id > 0)
    on_verdict((struct verdict){.allow = a == 1, .elf = e == 1, .loader = l == 1, .id = (uint32_t)id});
  else if (strcmp(line, "stop") == 0) kill(g->spid, SIGKILL);
  else if (strcmp(line, "flush") == 0) {
    cache_clear();
    marks_flush(g->fan);
  }
}

static void read_ctl(void) {
  static char buf[65536];
  static size_t len;
  ssize_t n = read(3, buf + len, sizeof buf - len - 1);
  if (n == 0) stop_sandbox(75); // the Node side is gone: nobody can answer a miss or keep the journal
  if (n < 0 && errno != EAGAIN && errno != EINTR) stop_sandbox(75);
  if (n < 0) return;
  len += (size_t)n;
  char *start = buf, *nl;
  while ((nl = memchr(start, '\n', len - (size_t)(start - buf)))) {
    *nl = 0;
    on_line(start);
    start = nl + 1;
  }
  len -= (size_t)(start - buf);
  memmove(buf, start, len);
  if (len == sizeof buf - 1) len = 0;
}

static void sandbox_exited(void) {
  int st = 0;
  // An attached sandbox's process is not our child: its status is its builder's to report (-1).
  if (waitpid(g->spid, &st, 0) != g->spid) st = -1;
  // Every process of the pid namespace has exited by now; journal what they queued before.
  read_events();
  read_notices_now();
  deny_pending();
  journal_now();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  int64_t cpu_us = (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
  emit(1, "x %d %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
       st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1, st != -1 && WIFSIGNALED(st) ? WTERMSIG(st) : 0, counts.hits, counts.misses, counts.denies,
       counts.timeouts, cpu_us, counts.kernel_hits, marks_added(),
       counts.permission);
  if (fcntl(4, F_SETFL, 0) != 0) dprintf(2, "execgate: fcntl: %s\n", strerror(errno)); // flush_out(1) polls
  flush_out(1);
  if (write(g->hb, "q", 1) < 0) dprintf(2, "execgate: warden: %s\n", strerror(errno));
  _exit(0);
}

// How long poll may sleep: until the next deadline, batch of lines, or batch of notices.
static int sleep_ms(int lines_due) {
  int t = expire();
  if (lines_due > 0 && lines_due < t) t = lines_due;
  int64_t nt = notices_at - now_ms();
  if (nt < t) t = (int)nt;
  return t < 0 ? 0 : t;
}

int gate_loop(struct gate *gate) {
  g = gate;
  if (fcntl(3, F_SETFL, O_NONBLOCK) != 0 || fcntl(4, F_SETFL, O_NONBLOCK) != 0) stop_sandbox(75);
  emit(1, "r %d %d\n", (int)g->spid, g->marked);
  int64_t beat = 0;
  for (;;) {
    if (now_ms() >= notices_at) read_notices();
    journal_now(); // the lines of the last iteration's decisions (timeouts, answered misses, notices)
    int due = flush_due();
    if (now_ms() - beat >= g->stall_ms / 4) {
      if (write(g->hb, "h", 1) < 0 && errno == EPIPE) stop_sandbox(76);
      beat = now_ms();
    }
    // POLLOUT only when lines are due but the pipe was full.
    struct pollfd p[5] = {{g->fan, POLLIN, 0}, {3, POLLIN, 0}, {g->sfd, POLLIN, 0}, {g->hb, 0, 0}, {4, due == 0 ? POLLOUT : 0, 0}};
    if (poll(p, 5, sleep_ms(due)) < 0 && errno != EINTR) stop_sandbox(70);
    if (p[0].revents & POLLIN) read_events();
    if (p[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) read_ctl();
    if (p[3].revents & (POLLERR | POLLHUP)) stop_sandbox(76); // the warden is gone
    if (p[2].revents & POLLIN) sandbox_exited();
  }
}
