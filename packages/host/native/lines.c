// The lines the helper sends the Node side (sandbox-attest §5.5, protocol in loop.c): buffered, so
// decision lines go out in batches (FLUSH_MS, FLUSH_BYTES) and a miss, which someone waits on, at
// once. If the buffer cannot drain, the sandbox stops rather than run unjournaled. A decision line
// needs the path of its file (read through the event's descriptor), which is looked up after the
// batch of events it belongs to has been answered, in the order the decisions were made.
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "loop.h"
#include "route.h"

#define FLUSH_MS 50
#define FLUSH_BYTES (32u << 10)
#define OUT_MAX (64u << 20)

static char *out;
static size_t out_len, out_cap;
static int64_t flush_at;
static int urgent;

void emit(int now, const char *fmt, ...) {
  char line[8192];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= (int)sizeof line) return;
  if (out_len + (size_t)n > out_cap) {
    out_cap = (out_len + (size_t)n) * 2;
    if (out_cap > OUT_MAX || !(out = realloc(out, out_cap))) {
      kill(g->spid, SIGKILL); // the journal cannot keep up
      _exit(74);
    }
  }
  if (out_len == 0) flush_at = now_ms() + FLUSH_MS;
  memcpy(out + out_len, line, (size_t)n);
  out_len += (size_t)n;
  urgent |= now;
}

void flush_out(int block) {
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

int flush_due(void) {
  if (out_len == 0) return -1;
  int64_t wait = flush_at - now_ms();
  if (urgent || out_len >= FLUSH_BYTES || wait <= 0) {
    flush_out(0);
    if (out_len == 0) urgent = 0;
    return out_len ? 0 : -1;
  }
  return (int)wait;
}

// A decision line waiting for its path: the descriptor stays open until the line is written.
struct pending {
  int fd, allow, route;
  char src;
  uint32_t vid;
  pid_t pid;
};
#define PENDING 4096
static struct pending pending[PENDING];
static int npending;

static void write_line(const struct pending *j) {
  static const char digits[] = "0123456789abcdef";
  char link[64], path[PATH_MAX], hex[2 * PATH_MAX + 1];
  snprintf(link, sizeof link, "self/fd/%d", j->fd);
  ssize_t n = readlinkat(g->proc, link, path, sizeof path);
  if (n < 0) n = 0;
  for (ssize_t i = 0; i < n; i++) {
    hex[2 * i] = digits[(unsigned char)path[i] >> 4];
    hex[2 * i + 1] = digits[(unsigned char)path[i] & 15];
  }
  hex[2 * n] = 0;
  emit(0, "d %d %s %c %" PRIu32 " %d %s\n", j->allow, route_name(j->route), j->src, j->vid, (int)j->pid, n ? hex : "-");
  close(j->fd);
}

void journal_later(int fd, int allow, int route, char src, uint32_t vid, pid_t pid) {
  if (npending == PENDING) journal_now();
  pending[npending++] = (struct pending){.fd = fd, .allow = allow, .route = route, .src = src, .vid = vid, .pid = pid};
}

void journal_now(void) {
  for (int i = 0; i < npending; i++) write_line(&pending[i]);
  npending = 0;
}

void stop_sandbox(int code) {
  kill(g->spid, SIGKILL);
  journal_now();
  flush_out(1);
  _exit(code);
}
