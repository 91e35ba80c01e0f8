// How a file came to be executed (sandbox-attest §5.5 journal `route`): the kernel opens, within
// one execve, the file named (direct) and then the file that interprets it: the `#!` interpreter of
// a script or the PT_INTERP loader of an ELF program (interpreter). After each exec event we note,
// per pid, the identity of the interpreter the next exec event of that pid must have to count as
// the interpreter. Reads go through the event's fd (pread) and stat(2): neither raises an event.
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include "gate.h"
#include "route.h"

#define EXPECTS 1024

struct expect {
  pid_t pid;
  dev_t dev;
  ino_t ino;
};
static struct expect expects[EXPECTS];

static uint64_t rd(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

// The PT_INTERP path of a little-endian ELF, or 0 when it has none.
static int elf_interp(int fd, const unsigned char *h, ssize_t n, char *out, size_t cap) {
  if (n < 52 || memcmp(h, "\177ELF", 4) != 0 || h[5] != 1) return 0;
  int wide = h[4] == 2;
  uint64_t phoff = wide ? rd(h + 32, 8) : rd(h + 28, 4);
  unsigned phentsize = (unsigned)(wide ? rd(h + 54, 2) : rd(h + 42, 2));
  unsigned phnum = (unsigned)(wide ? rd(h + 56, 2) : rd(h + 44, 2));
  if (phentsize < (wide ? 56u : 32u) || phnum > 256) return 0;
  static unsigned char table[256 * 64];
  if (phentsize > 64) return 0;
  ssize_t got = pread(fd, table, (size_t)phentsize * phnum, (off_t)phoff);
  for (unsigned i = 0; i < phnum && (ssize_t)((i + 1) * phentsize) <= got; i++) {
    const unsigned char *ph = table + (size_t)i * phentsize;
    if (rd(ph, 4) != 3) continue;
    uint64_t off = wide ? rd(ph + 8, 8) : rd(ph + 4, 4);
    uint64_t len = wide ? rd(ph + 32, 8) : rd(ph + 16, 4);
    if (len == 0 || len >= cap) return 0;
    if (pread(fd, out, len, (off_t)off) != (ssize_t)len) return 0;
    out[len] = 0;
    return out[0] == '/';
  }
  return 0;
}

// The `#!` interpreter path of a script, or 0.
static int script_interp(const unsigned char *h, ssize_t n, char *out, size_t cap) {
  if (n < 3 || h[0] != '#' || h[1] != '!') return 0;
  ssize_t i = 2;
  while (i < n && (h[i] == ' ' || h[i] == '\t')) i++;
  size_t len = 0;
  while (i < n && h[i] != ' ' && h[i] != '\t' && h[i] != '\n' && len + 1 < cap) out[len++] = (char)h[i++];
  out[len] = 0;
  return len > 0 && out[0] == '/';
}

static void expect_next(pid_t pid, int fd) {
  unsigned char h[256];
  char path[PATH_MAX];
  ssize_t n = pread(fd, h, sizeof h, 0);
  if (!script_interp(h, n, path, sizeof path) && !elf_interp(fd, h, n, path, sizeof path)) return;
  struct stat st;
  if (stat(path, &st) != 0) return;
  struct expect *e = &expects[(unsigned)pid % EXPECTS];
  e->pid = pid;
  e->dev = st.st_dev;
  e->ino = st.st_ino;
}

int exec_route(pid_t pid, const struct stat *st, int fd) {
  struct expect *e = &expects[(unsigned)pid % EXPECTS];
  int route = ROUTE_DIRECT;
  if (e->pid == pid && e->dev == st->st_dev && e->ino == st->st_ino) route = ROUTE_INTERPRETER;
  if (e->pid == pid) e->pid = 0;
  expect_next(pid, fd);
  return route;
}

const char *route_name(int r) { return r == ROUTE_INTERPRETER ? "interpreter" : r == ROUTE_LOADER ? "loader" : "direct"; }
