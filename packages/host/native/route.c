// How a file came to be executed (sandbox-attest §5.5 journal `route`): the kernel opens, within
// one execve, the file named (direct) and then the file that interprets it: the `#!` interpreter of
// a script or the PT_INTERP loader of an ELF program (interpreter). After each exec event we note,
// per pid, the identity of the interpreter the next exec event of that pid must have to count as
// the interpreter. Reads go through the event's fd (pread) and stat(2): neither raises an event.
//
// One exec open can reach the helper twice: as a permission event (decided and journaled) and then,
// once the open has succeeded, as its FAN_OPEN_EXEC notice. The route is worked out once, at the
// first of the two; where the decision set an ignore mask, a carry tells the notice that the open
// was journaled already.
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gate.h"
#include "route.h"

#define EXPECTS 1024
#define CARRIES 8192
#define CARRY_PROBE 16u
#define EM_X86_64_ 62
#define EM_386_ 3

struct expect {
  pid_t pid;
  dev_t dev;
  ino_t ino;
};
static struct expect expects[EXPECTS];

// An exec journaled with its permission event, whose notice is still to come.
struct carry {
  pid_t pid;
  dev_t dev;
  ino_t ino;
};
static struct carry carries[CARRIES];

static uint64_t rd(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

// The PT_INTERP path of an ELF program this kernel would load (little-endian x86-64 or i386,
// ET_EXEC or ET_DYN), or 0: a file the kernel refuses before it opens an interpreter must not leave an
// expectation behind, or a later direct exec of the loader would pass for the interpreter.
static int elf_interp(int fd, const unsigned char *h, ssize_t n, char *out, size_t cap) {
  if (n < 52 || memcmp(h, "\177ELF", 4) != 0 || h[5] != 1) return 0;
  int wide = h[4] == 2;
  unsigned type = (unsigned)rd(h + 16, 2), machine = (unsigned)rd(h + 18, 2);
  if ((type != 2 && type != 3) || machine != (wide ? EM_X86_64_ : EM_386_) || (wide && n < 64)) return 0;
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

static void interp_of(int fd, struct interp *in) {
  unsigned char h[256];
  char path[PATH_MAX];
  struct stat st;
  ssize_t n = pread(fd, h, sizeof h, 0);
  *in = (struct interp){.known = 1};
  if (!script_interp(h, n, path, sizeof path) && !elf_interp(fd, h, n, path, sizeof path)) return;
  if (stat(path, &st) != 0) return;
  *in = (struct interp){.dev = st.st_dev, .ino = st.st_ino, .known = 1, .has = 1};
}

// The interpreters of the files last looked up, by key (a file's interpreter is in its bytes, which
// the key follows), so a loader asked about on every exec is read once.
#define INTERPS 1024
static struct {
  struct key k;
  struct interp in;
} interps[INTERPS];

static void interp_known(const struct stat *st, int fd, struct interp *in) {
  struct key k;
  key_of(st, &k);
  unsigned slot = (unsigned)((k.ino * 0x9e3779b97f4a7c15ull) >> 54) % INTERPS;
  if (interps[slot].in.known && key_eq(&interps[slot].k, &k)) {
    *in = interps[slot].in;
    return;
  }
  interp_of(fd, in);
  interps[slot].k = k;
  interps[slot].in = *in;
}

int exec_route(pid_t pid, const struct stat *st, int fd, struct interp *in) {
  struct expect *e = &expects[(unsigned)pid % EXPECTS];
  int route = ROUTE_DIRECT;
  if (e->pid == pid && e->dev == st->st_dev && e->ino == st->st_ino) route = ROUTE_INTERPRETER;
  if (e->pid == pid) e->pid = 0;
  // The interpreter's path may since name another inode, which then counts as run directly (the
  // cautious side: a loader run directly drops every ignore mask, decide.c).
  interp_known(st, fd, in);
  if (in->has) *e = (struct expect){.pid = pid, .dev = (dev_t)in->dev, .ino = (ino_t)in->ino};
  return route;
}

void expect_clear(pid_t pid) {
  struct expect *e = &expects[(unsigned)pid % EXPECTS];
  if (e->pid == pid) e->pid = 0;
}

// Open addressing over a window of CARRY_PROBE slots from the pid's; a full window overwrites its
// first slot (the notice is then journaled a second time, never lost).
static struct carry *carry_at(pid_t pid, dev_t dev, ino_t ino, int add) {
  struct carry *free = NULL;
  for (unsigned i = 0; i < CARRY_PROBE; i++) {
    struct carry *c = &carries[((unsigned)pid + i) % CARRIES];
    if (c->pid == pid && c->dev == dev && c->ino == ino) return c;
    if (!free && c->pid == 0) free = c;
  }
  if (!add) return NULL;
  return free ? free : &carries[(unsigned)pid % CARRIES];
}

void carry_put(pid_t pid, const struct key *k) {
  *carry_at(pid, (dev_t)k->dev, (ino_t)k->ino, 1) = (struct carry){.pid = pid, .dev = (dev_t)k->dev, .ino = (ino_t)k->ino};
}

int carry_take(pid_t pid, const struct stat *st) {
  struct carry *c = carry_at(pid, st->st_dev, st->st_ino, 0);
  if (c) c->pid = 0;
  return c != NULL;
}

int is_elf(int fd) {
  unsigned char h[4];
  ssize_t n = pread(fd, h, 4, 0);
  if (n < 0 || FAULT("read")) return -1;
  return n == 4 && memcmp(h, "\177ELF", 4) == 0;
}

int in_execve(int proc, pid_t pid) {
  char path[32], buf[24];
  snprintf(path, sizeof path, "%d/syscall", (int)pid);
  int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  long nr = strtol(buf, NULL, 10);
  return nr == 59 || nr == 322; // execve, execveat (x86-64)
}

const char *route_name(int r) { return r == ROUTE_INTERPRETER ? "interpreter" : r == ROUTE_LOADER ? "loader" : "direct"; }
