// The kernel's half of the decision cache (sandbox-attest §5.5.5): once a file's content is
// allowed, an ignore mask on its inode tells the kernel to stop asking about it. The notices of the
// second group still report every exec open that succeeded, and they are what the journal records
// (notice.c). The kernel clears an ignore mask when the file is modified (no
// FAN_MARK_IGNORED_SURV_MODIFY), so a rewritten file is asked about again.
//
// Not every write clears a mask: a write through a shared writable mapping, asynchronous I/O or
// the block device under the file raises no modify event. So masks are set only on files whose
// bytes nothing in the sandbox can rewrite (cacheable): on a read-only mount, with one name (a
// second name could sit on a writable mount; an ignore mask is the inode's, whatever the mount).
// On a writable mount every exec is decided by content (decide.c).
//
// A notice of an exec the kernel let through on an ignore mask carries no decision, so the verdict
// the mask stands for is kept per inode here; a file whose verdict cannot be kept gets no mask. An
// exec permission event for an inode means the kernel no longer ignores it (the file was modified,
// or the masks were flushed): the kept verdict stops counting until it is marked again. Every
// notice queued before a permission event is handled before it (loop.c), so a notice always finds
// the verdict that was in force when its exec happened.
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include "gate.h"

#define SLOTS 65536u
#define PROBE 16u

struct marked {
  uint64_t dev, ino;
  struct verdict v; // the verdict the masks stand for
  int used;         // the slot has held an inode (open addressing: probes go on past it)
  int valid;        // the inode carries our exec mask, as far as we know
  int open_valid;   // the inode carries our mask on plain opens (FAN_OPEN_PERM), as far as we know
  struct key quiet; // the key the inode had when its notices were masked (quiet_exec), or zeros
};
static struct marked table[SLOTS];
static uint64_t nmarks;

static uint32_t slot_of(uint64_t dev, uint64_t ino) {
  uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^ (ino * 0xc2b2ae3d27d4eb4full);
  return (uint32_t)(h ^ (h >> 29));
}

static struct marked *find(uint64_t dev, uint64_t ino, int add) {
  uint32_t h = slot_of(dev, ino);
  for (uint32_t i = 0; i < PROBE; i++) {
    struct marked *m = &table[(h + i) % SLOTS];
    if (m->used && m->dev == dev && m->ino == ino) return m;
    if (!m->used) return add ? m : NULL;
  }
  return NULL;
}

int cacheable(int fd, const struct stat *st) {
  struct statvfs vs;
  if (st->st_nlink != 1 || fstatvfs(fd, &vs) != 0) return 0;
  return (vs.f_flag & ST_RDONLY) != 0;
}

int ignore_opens(int fan, int fd, uint64_t mask) {
  return fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK, mask, fd, NULL) == 0;
}

int mark_exec(int fan, int fd, const struct key *k, struct verdict v, int also_open) {
  struct marked *m = find(k->dev, k->ino, 1);
  if (!m) return 0; // no room to keep the verdict: the kernel keeps asking
  *m = (struct marked){.dev = k->dev, .ino = k->ino, .v = v, .used = 1, .quiet = m->quiet};
  m->valid = ignore_opens(fan, fd, FAN_OPEN_EXEC_PERM | (also_open ? FAN_OPEN_PERM : 0));
  m->open_valid = m->valid && also_open;
  nmarks += (uint64_t)m->valid;
  return m->valid;
}

// An ELF file an ordinary program opened, its content allowed: the kernel stops asking about its
// plain opens, and the verdict is kept for the notices of a loader's opens of it (watch.c).
int mark_open(int fan, int fd, const struct key *k, struct verdict v) {
  struct marked *m = find(k->dev, k->ino, 1);
  if (!m) return 0; // no room to keep the verdict: the kernel keeps asking
  if (!m->used || m->v.id != v.id) *m = (struct marked){.dev = k->dev, .ino = k->ino, .v = v, .used = 1, .quiet = m->quiet};
  m->open_valid = ignore_opens(fan, fd, FAN_OPEN_PERM);
  return m->open_valid;
}

int open_verdict(uint64_t dev, uint64_t ino, struct verdict *v) {
  const struct marked *m = find(dev, ino, 0);
  if (!m || !m->open_valid) return 0;
  *v = m->v;
  return 1;
}

void quiet_exec(int notes, int fd, const struct key *k) {
  // Once per content: the key changes when the file is modified, which also clears the mask. A
  // mask lost some other way only brings back notices, which are then dropped (notice.c).
  struct marked *m = find(k->dev, k->ino, 1);
  if (m && m->used && key_eq(&m->quiet, k)) return;
  if (!ignore_opens(notes, fd, FAN_OPEN_EXEC) || !m) return;
  if (!m->used) *m = (struct marked){.dev = k->dev, .ino = k->ino, .used = 1};
  m->quiet = *k;
}

// The kernel asked about an exec (`exec`) or a plain open (`open`) of the inode: no such mask of
// ours holds on it.
void unmark(uint64_t dev, uint64_t ino, int exec, int open) {
  struct marked *m = find(dev, ino, 0);
  if (!m) return;
  if (exec) m->valid = 0;
  if (open) m->open_valid = 0;
}

int marked_verdict(uint64_t dev, uint64_t ino, struct verdict *v) {
  const struct marked *m = find(dev, ino, 0);
  if (!m || !m->valid) return 0;
  *v = m->v;
  return 1;
}

void marks_flush(int fan) {
  // Removes every inode mark of the group (the mount marks stay). The kept verdicts stay valid until
  // the kernel next asks about their inode: notices already queued were let through under the
  // masks and are journaled with them.
  fanotify_mark(fan, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL);
}

uint64_t marks_added(void) { return nmarks; }
