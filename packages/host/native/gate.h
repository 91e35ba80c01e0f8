// Shared state of the exec gate helper (sandbox-attest §5.5). See execgate.c.
#ifndef EXECGATE_GATE_H
#define EXECGATE_GATE_H
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

// The cache key: a file's identity and every field a write changes.
struct key {
  uint64_t dev, ino;
  int64_t size, mtime_s, mtime_ns, ctime_s, ctime_ns;
};

// What the Node side answered for a key; `id` names the answer (the request it answered), and is
// what a journal line cites, so the Node side knows the digest behind it.
struct verdict {
  unsigned allow : 1, elf : 1, loader : 1;
  uint32_t id;
};

// The interpreter a file names (`#!` or PT_INTERP), as the inode its path resolved to; `has` when
// there is one (`known` marks a filled slot of route.c's cache).
struct interp {
  uint64_t dev, ino;
  int known, has;
};

struct gate {
  int fan, notes, proc, hb, lifeline, sfd; // fan: permission events; notes: exec notices
  pid_t self, node_pid, warden, spid;
  int timeout_ms, stall_ms, enforce, use_cache, marked, nice;
  const char *workspace, *cwd;
};

// What the helper counts and reports when the sandbox ends.
struct counts {
  uint64_t hits, misses, denies, timeouts, kernel_hits;
};

int64_t now_ms(void);
int gate_loop(struct gate *g);

// cache.c: the stat-keyed verdict cache.
void key_of(const struct stat *st, struct key *k);
int key_eq(const struct key *a, const struct key *b);
int cache_get(const struct key *k, struct verdict *v);
void cache_put(const struct key *k, struct verdict v);
void cache_clear(void);

// marks.c: the kernel's half of the cache (ignore masks on allowed inodes).
int mark_exec(int fan, int fd, const struct key *k, struct verdict v, int also_open);
int ignore_opens(int fan, int fd, uint64_t mask);
void quiet_exec(int notes, int fd, const struct key *k);
void unmark(uint64_t dev, uint64_t ino);
int marked_verdict(uint64_t dev, uint64_t ino, struct verdict *v);
void marks_flush(int fan);
uint64_t marks_added(void);

#endif
