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

// Room for `more` bytes; a journal that cannot keep up stops the sandbox rather than lose a line.
static void reserve(size_t more) {
  if (out_len + more <= out_cap) return;
  size_t cap = (out_len + more) * 2;
  char *grown = cap > OUT_MAX ? NULL : realloc(out, cap);
  if (!grown) {
    kill(g->spid, SIGKILL);
    _exit(74);
  }
  out = grown;
  out_cap = cap;
}

// Lines of any length are formatted straight into the buffer: none is dropped (a decision line's
// path, in hex, can be twice PATH_MAX).
void emit(int now, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || FAULT("emit")) {
    va_end(aq);
    kill(g->spid, SIGKILL); // a line that cannot be formatted is a decision that cannot be journaled
    _exit(74);
  }
  reserve((size_t)n + 1);
  vsnprintf(out + out_len, (size_t)n + 1, fmt, aq);
  va_end(aq);
  if (out_len == 0) flush_at = now_ms() + FLUSH_MS;
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

// The path travels in hex; where the kernel cannot give one (a path longer than a page, say), the
// line still goes, with "-".
static void write_line(const struct pending *j) {
  static const char digits[] = "0123456789abcdef";
  static char path[2 * PATH_MAX], hex[4 * PATH_MAX + 1];
  char link[64];
  snprintf(link, sizeof link, "self/fd/%d", j->fd);
  ssize_t n = readlinkat(g->proc, link, path, sizeof path);
  if (n < 0 || FAULT("readlink")) n = 0;
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
