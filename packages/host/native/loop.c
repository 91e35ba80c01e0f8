// The exec gate's event loop (sandbox-attest §5.5): answers every permission event from the cache
// or after asking the Node side, denies at the timeout, journals every exec decision, heartbeats the
// warden, and ends when the sandbox's pid 1 exits. Protocol (text lines):
//   helper → node (fd 4): r <spid> <marked> | m <id> <path> <key…> | d <allow> <route> <src> <key…>
//                         <pid> <hexpath> | x <code> <signal> <hits> <misses> <denies> <timeouts> <cpu_us>
//   node → helper (fd 3): v <id> <allow> <elf> <loader> | stop | flush
// <key…> is dev ino size mtime_s mtime_ns ctime_s ctime_ns; src is c (cache), n (node), t (timeout).

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gate.h"
#include "route.h"

#define MAXPEND 4096
#define MAXREQ 4096

struct pend {
  int fd, exec, route, used, waiting, asked, have_e, have_f;
  pid_t pid;
  struct key fk, ek;
  struct verdict ve, vf;
  int64_t deadline;
};
struct req {
  int id, used;
  struct key k;
};

static struct gate *g;
static struct pend pends[MAXPEND];
static struct req reqs[MAXREQ];
static int next_id = 1;
static uint64_t hits, misses, denies, timeouts;
static int npend;
static char *out;
static size_t out_len, out_cap;

static void emit(const char *fmt, ...) {
  char line[8192];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= (int)sizeof line) return;
  if (out_len + (size_t)n > out_cap) {
    out_cap = (out_len + (size_t)n) * 2;
    if (out_cap > (64u << 20) || !(out = realloc(out, out_cap))) {
      // The journal cannot keep up: stop the sandbox rather than run unjournaled.
      kill(g->spid, SIGKILL);
      _exit(74);
    }
  }
  memcpy(out + out_len, line, (size_t)n);
  out_len += (size_t)n;
}

static void flush_out(int block) {
  while (out_len > 0) {
    ssize_t n = write(4, out, out_len);
    if (n < 0 && errno == EAGAIN && block) {
      struct pollfd p = {4, POLLOUT, 0};
      poll(&p, 1, 1000);
      continue;
    }
    if (n <= 0) return;
    memmove(out, out + n, out_len - (size_t)n);
    out_len -= (size_t)n;
  }
}

#define KEYFMT "%" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
#define KEYARGS(k) (k).dev, (k).ino, (k).size, (k).mtime_s, (k).mtime_ns, (k).ctime_s, (k).ctime_ns

static void respond(struct pend *p, int allow) {
  struct fanotify_response r = {.fd = p->fd, .response = allow ? FAN_ALLOW : FAN_DENY};
  if (write(g->fan, &r, sizeof r) != (ssize_t)sizeof r) dprintf(2, "execgate: respond: %s\n", strerror(errno));
  close(p->fd);
  p->used = 0;
  npend--;
}

static void journal(struct pend *p, int allow, char src) {
  char link[64], path[PATH_MAX], hex[2 * PATH_MAX + 1];
  snprintf(link, sizeof link, "self/fd/%d", p->fd);
  ssize_t n = readlinkat(g->proc, link, path, sizeof path);
  if (n < 0) n = 0;
  for (ssize_t i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", (unsigned char)path[i]);
  hex[2 * n] = 0;
  emit("d %d %s %c " KEYFMT " %d %s\n", allow, route_name(p->route), src, KEYARGS(p->fk), (int)p->pid, n ? hex : "-");
}

static void finish(struct pend *p, int allow, int journaled, char src) {
  if (!allow) denies++;
  if (journaled) journal(p, allow, src);
  respond(p, allow);
}

static void request(struct pend *p, const struct key *k, const char *path) {
  p->asked = 1;
  misses++;
  for (int i = 0; i < MAXREQ; i++)
    if (reqs[i].used && key_eq(&reqs[i].k, k)) {
      p->waiting = reqs[i].id;
      return;
    }
  for (int i = 0; i < MAXREQ; i++)
    if (!reqs[i].used) {
      reqs[i] = (struct req){.id = next_id++, .used = 1, .k = *k};
      p->waiting = reqs[i].id;
      emit("m %d %s " KEYFMT "\n", reqs[i].id, path, KEYARGS(*k));
      return;
    }
  p->waiting = -1; // no room: the deadline denies it
}

static int lookup(const struct key *k, int have, struct verdict hv, struct verdict *v) {
  if (have) {
    *v = hv;
    return 1;
  }
  return g->use_cache && cache_get(k, v);
}

// Decides `p` if every verdict it needs is known; otherwise asks for the missing one.
static void evaluate(struct pend *p) {
  struct verdict v;
  char path[64];
  if (!p->exec) {
    if (!lookup(&p->ek, p->have_e, p->ve, &v)) {
      snprintf(path, sizeof path, "/proc/%d/exe", (int)p->pid);
      request(p, &p->ek, path);
      return;
    }
    if (!v.loader) return finish(p, 1, 0, 'c');
  }
  if (!lookup(&p->fk, p->have_f, p->vf, &v)) {
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)g->self, p->fd);
    request(p, &p->fk, path);
    return;
  }
  if (!p->exec && !v.elf) return finish(p, 1, 0, 'c');
  if (!p->asked) hits++;
  finish(p, v.allow, 1, p->asked ? 'n' : 'c');
}

static struct pend *new_pend(void) {
  for (int i = 0; i < MAXPEND; i++)
    if (!pends[i].used) {
      memset(&pends[i], 0, sizeof pends[i]);
      pends[i].used = 1;
      npend++;
      return &pends[i];
    }
  return NULL;
}

static int is_elf(int fd) {
  unsigned char h[4];
  return pread(fd, h, 4, 0) == 4 && memcmp(h, "\177ELF", 4) == 0;
}

static void on_event(const struct fanotify_event_metadata *m) {
  struct fanotify_response r = {.fd = m->fd, .response = FAN_ALLOW};
  struct stat st;
  if (m->fd < 0) return;
  if (m->pid == g->self || m->pid == g->node_pid || m->pid == g->warden || fstat(m->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (write(g->fan, &r, sizeof r) < 0) dprintf(2, "execgate: respond: %s\n", strerror(errno));
    close(m->fd);
    return;
  }
  struct pend *p = new_pend();
  if (!p) {
    r.response = FAN_DENY;
    if (write(g->fan, &r, sizeof r) < 0) dprintf(2, "execgate: respond: %s\n", strerror(errno));
    close(m->fd);
    return;
  }
  p->fd = m->fd;
  p->pid = m->pid;
  p->deadline = now_ms() + g->timeout_ms;
  key_of(&st, &p->fk);
  p->exec = (m->mask & FAN_OPEN_EXEC_PERM) != 0;
  if (p->exec) p->route = exec_route(m->pid, &st, m->fd);
  else if (!is_elf(m->fd)) {
    // Only ELF files can be mapped by a loader: allow, and with the cache on, tell the kernel to
    // stop asking about this inode's opens (the ignore mask is cleared when the file is modified;
    // it never covers FAN_OPEN_EXEC_PERM).
    if (g->use_cache) fanotify_mark(g->fan, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK, FAN_OPEN_PERM, m->fd, NULL);
    return finish(p, 1, 0, 'c');
  } else {
    char exe[32];
    struct stat es;
    snprintf(exe, sizeof exe, "%d/exe", (int)m->pid);
    p->route = ROUTE_LOADER;
    if (fstatat(g->proc, exe, &es, 0) != 0) return finish(p, 0, 0, 'c');
    key_of(&es, &p->ek);
  }
  evaluate(p);
}

static void read_events(void) {
  char buf[16384] __attribute__((aligned(8)));
  for (;;) {
    ssize_t n = read(g->fan, buf, sizeof buf);
    if (n <= 0) return;
    const struct fanotify_event_metadata *m = (const void *)buf;
    for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
      if (m->vers != FANOTIFY_METADATA_VERSION) {
        kill(g->spid, SIGKILL);
        _exit(73);
      }
      on_event(m);
    }
  }
}

static void on_verdict(int id, struct verdict v) {
  struct req *r = NULL;
  for (int i = 0; i < MAXREQ && !r; i++)
    if (reqs[i].used && reqs[i].id == id) r = &reqs[i];
  if (!r) return;
  r->used = 0;
  if (g->use_cache) cache_put(&r->k, v);
  for (int i = 0; i < MAXPEND; i++) {
    struct pend *p = &pends[i];
    if (!p->used || p->waiting != id) continue;
    p->waiting = 0;
    if (!p->exec && !p->have_e && key_eq(&r->k, &p->ek)) p->have_e = 1, p->ve = v;
    else p->have_f = 1, p->vf = v;
    evaluate(p);
  }
}

static void stop_sandbox(int code) {
  kill(g->spid, SIGKILL);
  flush_out(1);
  _exit(code);
}

static void on_line(char *line) {
  int id, a, e, l;
  if (sscanf(line, "v %d %d %d %d", &id, &a, &e, &l) == 4)
    on_verdict(id, (struct verdict){.allow = a == 1, .elf = e == 1, .loader = l == 1});
  else if (strcmp(line, "stop") == 0) kill(g->spid, SIGKILL);
  else if (strcmp(line, "flush") == 0) cache_clear();
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

static int expire(void) {
  int64_t now = now_ms(), next = now + g->stall_ms / 4;
  for (int i = 0; i < MAXPEND && npend > 0; i++) {
    struct pend *p = &pends[i];
    if (!p->used) continue;
    if (p->deadline <= now) {
      timeouts++;
      finish(p, 0, 1, 't');
    } else if (p->deadline < next)
      next = p->deadline;
  }
  return (int)(next - now);
}

static void sandbox_exited(void) {
  int st = 0;
  waitpid(g->spid, &st, 0);
  for (int i = 0; i < MAXPEND; i++)
    if (pends[i].used) finish(&pends[i], 0, 1, 't');
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  int64_t cpu_us = (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
  emit("x %d %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 "\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0,
       hits, misses, denies, timeouts, cpu_us);
  fcntl(4, F_SETFL, 0);
  flush_out(1);
  if (write(g->hb, "q", 1) < 0) dprintf(2, "execgate: warden: %s\n", strerror(errno));
  _exit(0);
}

int gate_loop(struct gate *gate) {
  g = gate;
  fcntl(3, F_SETFL, O_NONBLOCK);
  fcntl(4, F_SETFL, O_NONBLOCK);
  emit("r %d %d\n", (int)g->spid, g->marked);
  int64_t beat = 0;
  for (;;) {
    flush_out(0);
    if (now_ms() - beat >= g->stall_ms / 4) {
      if (write(g->hb, "h", 1) < 0 && errno == EPIPE) stop_sandbox(76);
      beat = now_ms();
    }
    struct pollfd p[5] = {{g->fan, POLLIN, 0}, {3, POLLIN, 0}, {g->sfd, POLLIN, 0}, {g->hb, 0, 0}, {4, out_len ? POLLOUT : 0, 0}};
    int t = expire();
    if (poll(p, 5, t < 0 ? 0 : t) < 0 && errno != EINTR) stop_sandbox(70);
    if (p[0].revents & POLLIN) read_events();
    if (p[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) read_ctl();
    if (p[3].revents & (POLLERR | POLLHUP)) stop_sandbox(76); // the warden is gone
    if (p[2].revents & POLLIN) sandbox_exited();
  }
}
