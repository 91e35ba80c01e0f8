// Permission events (sandbox-attest §5.5.4–§5.5.5): each open the kernel asks about waits here
// until it is decided from the cache or after asking the Node side, and the timeout denies it.
// Every exec and loader mapping decided here is journaled here; the notice of the same open
// (notice.c) is not journaled again.
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "loop.h"
#include "route.h"

#define MAXPEND 4096
#define MAXREQ 4096

struct pend {
  int fd, exec, route, used, waiting, asked, have_e, have_f;
  int ro; // the file is cacheable (marks.c): its verdict may come from a cache and set a mask
  pid_t pid;
  struct key fk, ek; // the file's key; for a plain open, the key of the process's executable
  struct interp in;
  struct verdict ve, vf;
  int64_t deadline;
};
struct req {
  int id, used;
  struct key k;
};

static struct pend pends[MAXPEND];
static struct req reqs[MAXREQ];
static int next_id = 1;
static int npend;

#define KEYFMT "%" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
#define KEYARGS(k) (k).dev, (k).ino, (k).size, (k).mtime_s, (k).mtime_ns, (k).ctime_s, (k).ctime_ns

// An answer the kernel did not take leaves the process waiting, and the event would be released as
// allowed when the group closes: the sandbox stops instead.
static void respond(int fd, int allow) {
  struct fanotify_response r = {.fd = fd, .response = allow ? FAN_ALLOW : FAN_DENY};
  if (FAULT("respond") || write(g->fan, &r, sizeof r) != (ssize_t)sizeof r) {
    dprintf(2, "execgate: respond: %s; sandbox stopped\n", strerror(errno));
    stop_sandbox(79);
  }
}

static void answer(int fd, int allow) {
  respond(fd, allow);
  close(fd);
}

// Answers `p`; `vid` is the verdict that decided (0: none, a timeout), journaled when `journaled`
// (after the answer: the process goes on while the line is written).
static void finish(struct pend *p, int allow, int journaled, char src, uint32_t vid) {
  if (!allow) counts.denies++;
  if (!allow && p->exec) expect_clear(p->pid);
  if (journaled) {
    respond(p->fd, allow);
    journal_later(p->fd, allow, p->route, src, vid, p->pid);
  } else
    answer(p->fd, allow);
  p->used = 0;
  npend--;
}

// With the cache on, an allowed file that names an interpreter gets an ignore mask: the kernel stops
// asking (marks.c), and its notices journal its execs. Files that name none (loaders, static
// programs) are asked about on every exec, so that each exec has a permission event: the loader's
// run as a program is seen before it runs, and the notices are read before a process can exec
// again (notice.c). Being journaled here every time, they need no notice.
static void remember(struct pend *p, struct verdict f) {
  if (!g->use_cache || !f.allow || !p->exec || !p->ro) return;
  if (f.loader || !p->in.has) quiet_exec(g->notes, p->fd, &p->fk);
  // This open's notice will find the mask: the carry tells it the open was journaled here.
  else if (mark_exec(g->fan, p->fd, &p->fk, f, 1)) carry_put(p->pid, &p->fk);
}

// The content decision of an exec, or of a file a loader running as a program maps.
static void decided(struct pend *p, struct verdict f) {
  char src = p->asked ? 'n' : 'c';
  if (!p->asked) counts.hits++;
  remember(p, f);
  // A loader's mapping journaled here: its notice of the open (watch.c) must not journal it again.
  if (!p->exec && f.allow && loaders_tracked()) carry_put(p->pid, &p->fk);
  finish(p, f.allow, 1, src, f.id);
}

static void request(struct pend *p, const struct key *k, const char *path) {
  p->asked = 1;
  counts.misses++;
  for (int i = 0; i < MAXREQ; i++)
    if (reqs[i].used && key_eq(&reqs[i].k, k)) {
      p->waiting = reqs[i].id;
      return;
    }
  for (int i = 0; i < MAXREQ; i++)
    if (!reqs[i].used) {
      reqs[i] = (struct req){.id = next_id++, .used = 1, .k = *k};
      p->waiting = reqs[i].id;
      emit(1, "m %d %s " KEYFMT "\n", reqs[i].id, path, KEYARGS(*k));
      return;
    }
  p->waiting = -1; // no room: the deadline denies it
}

static void ask(struct pend *p, const struct key *k, const char *fmt, int a, int b) {
  char path[64];
  snprintf(path, sizeof path, fmt, a, b);
  request(p, k, path);
}

// The verdict of `k`: the one answered for this event, or the cache's when `cached` allows it. A
// file's own verdict comes from the cache only when it is cacheable (its bytes cannot change
// unseen); a running executable's (is the opener a loader?) always may: nothing can write to a
// file while it runs, and every exec of a writable file is hashed and refreshes its entry.
static int lookup(const struct key *k, int cached, int have, struct verdict hv, struct verdict *v) {
  if (have) {
    *v = hv;
    return 1;
  }
  return g->use_cache && cached && cache_get(k, v);
}

// An ordinary program (through its own loader) opening an ELF file: not an execution, allowed.
// With the cache on, the file's verdict is learnt once so the kernel can skip its later opens.
static void open_by_program(struct pend *p) {
  struct verdict f;
  if (g->use_cache && p->ro) {
    if (!lookup(&p->fk, 1, p->have_f, p->vf, &f)) return ask(p, &p->fk, "/proc/%d/fd/%d", (int)g->self, p->fd);
    if (f.allow) mark_open(g->fan, p->fd, &p->fk, f);
  }
  finish(p, 1, 0, 'c', 0);
}

// Decides `p` if every verdict it needs is known; otherwise asks for the missing one.
static void evaluate(struct pend *p) {
  struct verdict v;
  if (!p->exec) {
    if (!lookup(&p->ek, 1, p->have_e, p->ve, &v)) return ask(p, &p->ek, "/proc/%d/exe", (int)p->pid, 0);
    if (!v.loader) return open_by_program(p);
    // The exec of a new program opens it once more before the executable changes: that open is
    // the exec's, decided and journaled as such, not a mapping by the loader.
    if (in_execve(g->proc, p->pid)) return finish(p, 1, 0, 'c', 0);
    loader_runs(p->pid, &p->ek); // a loader runs whose exec was not seen as direct
  }
  if (!lookup(&p->fk, p->ro, p->have_f, p->vf, &v)) return ask(p, &p->fk, "/proc/%d/fd/%d", (int)g->self, p->fd);
  if (!p->exec && !v.elf) return finish(p, 1, 0, 'c', 0);
  // A loader about to run as a program: tracked before it runs (watch.c), for its mappings.
  if (p->exec && v.loader && p->route == ROUTE_DIRECT && v.allow) loader_runs(p->pid, &p->fk);
  decided(p, v);
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

// An open the helper cannot decide by content is refused and journaled (source and rule timeout:
// no digest): a file it cannot stat or read, an exec of anything but a regular file, and a block
// device where the kernel asks about one (its blocks are a write path under the gate; recent
// kernels, 6.18 measured, raise no permission event for device files, so the sandbox must hold
// none, and CAP_MKNOD is dropped: execgate.c).
static void undecidable(const struct fanotify_event_metadata *m, int exec) {
  counts.denies++;
  if (exec) expect_clear(m->pid);
  respond(m->fd, 0);
  journal_later(m->fd, 0, exec ? ROUTE_DIRECT : ROUTE_LOADER, 't', 0, m->pid);
}

void on_permission(const struct fanotify_event_metadata *m) {
  struct stat st;
  if (is_ours(m->pid)) return answer(m->fd, 1);
  counts.permission++;
  int exec = (m->mask & FAN_OPEN_EXEC_PERM) != 0;
  if (FAULT("fstat") || fstat(m->fd, &st) != 0) return undecidable(m, exec);
  if (!S_ISREG(st.st_mode)) {
    if (exec || S_ISBLK(st.st_mode)) return undecidable(m, exec);
    return answer(m->fd, 1); // a character device, a pipe, a socket: nothing to run or map
  }
  int elf = exec ? 1 : is_elf(m->fd);
  if (elf < 0) return undecidable(m, exec);
  struct pend *p = new_pend();
  if (!p) return undecidable(m, exec); // more opens waiting than the table holds
  p->fd = m->fd;
  p->pid = m->pid;
  p->deadline = now_ms() + g->timeout_ms;
  key_of(&st, &p->fk);
  p->exec = exec;
  p->ro = g->use_cache && cacheable(m->fd, &st);
  if (!elf) {
    // Only ELF files can be mapped by a loader: allow, and where the file is cacheable, tell the
    // kernel to stop asking about this inode's opens (the mask is cleared when it is modified).
    if (p->ro) ignore_opens(g->fan, m->fd, FAN_OPEN_PERM);
    return finish(p, 1, 0, 'c', 0);
  }
  // The kernel asked: no mask of ours for this kind of open holds on this inode.
  unmark(st.st_dev, st.st_ino, exec, (m->mask & FAN_OPEN_PERM) != 0);
  if (p->exec) {
    p->route = exec_route(m->pid, &st, m->fd, &p->in);
  } else {
    char exe[32];
    struct stat es;
    snprintf(exe, sizeof exe, "%d/exe", (int)m->pid);
    p->route = ROUTE_LOADER;
    if (fstatat(g->proc, exe, &es, 0) != 0) return finish(p, 0, 1, 't', 0); // whose open? refused, journaled
    key_of(&es, &p->ek);
  }
  evaluate(p);
}

void on_verdict(struct verdict v) {
  struct req *r = NULL;
  for (int i = 0; i < MAXREQ && !r; i++)
    if (reqs[i].used && reqs[i].id == (int)v.id) r = &reqs[i];
  if (!r) return;
  r->used = 0;
  if (g->use_cache) cache_put(&r->k, v);
  for (int i = 0; i < MAXPEND; i++) {
    struct pend *p = &pends[i];
    if (!p->used || p->waiting != r->id) continue;
    p->waiting = 0;
    if (!p->exec && !p->have_e && key_eq(&r->k, &p->ek)) p->have_e = 1, p->ve = v;
    else p->have_f = 1, p->vf = v;
    evaluate(p);
  }
}

int expire(void) {
  int64_t now = now_ms(), next = now + g->stall_ms / 4;
  for (int i = 0; i < MAXPEND && npend > 0; i++) {
    struct pend *p = &pends[i];
    if (!p->used) continue;
    if (p->deadline <= now) {
      counts.timeouts++;
      finish(p, 0, 1, 't', 0);
    } else if (p->deadline < next)
      next = p->deadline;
  }
  return (int)(next - now);
}

void deny_pending(void) {
  for (int i = 0; i < MAXPEND; i++)
    if (pends[i].used) finish(&pends[i], 0, 1, 't', 0);
}
