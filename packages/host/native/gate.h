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

#define MAX_RO 16

struct gate {
  int fan, notes, proc, hb, lifeline, sfd; // fan: permission events; notes: exec notices
  pid_t self, node_pid, warden, spid, attach; // attach: a process of a sandbox built elsewhere
  int timeout_ms, stall_ms, enforce, use_cache, marked, nice, nro;
  const char *workspace, *cwd;
  const char *ro[MAX_RO]; // paths made read-only in the sandbox's mount namespace (--read-only)
};

// Fault injection, compiled only into the test build (build.sh: execgate-asan, -DEXECGATE_FAULTS):
// FAULT("name") is true when the comma-separated list in $EXECGATE_FAULT names it, so a test can
// make a call that never fails on a healthy host fail, and check that the helper fails closed.
#ifdef EXECGATE_FAULTS
int fault(const char *name);
#define FAULT(name) fault(name)
#else
#define FAULT(name) 0
#endif

// What the helper counts and reports when the sandbox ends.
struct counts {
  uint64_t hits, misses, denies, timeouts, kernel_hits, permission; // permission: events answered
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
// cacheable reports whether the kernel or the stat-keyed cache may stand for this file's content:
// only a file on a read-only mount with one name, whose bytes nothing in the sandbox can rewrite.
int cacheable(int fd, const struct stat *st);
int mark_exec(int fan, int fd, const struct key *k, struct verdict v, int also_open);
int ignore_opens(int fan, int fd, uint64_t mask);
void quiet_exec(int notes, int fd, const struct key *k);
void unmark(uint64_t dev, uint64_t ino, int exec, int open);
int marked_verdict(uint64_t dev, uint64_t ino, struct verdict *v);
int mark_open(int fan, int fd, const struct key *k, struct verdict v);
int open_verdict(uint64_t dev, uint64_t ino, struct verdict *v);
void marks_flush(int fan);
uint64_t marks_added(void);

#endif
