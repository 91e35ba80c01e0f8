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

// What the Node side answered for a key.
struct verdict {
  unsigned allow : 1, elf : 1, loader : 1;
};

struct gate {
  int fan, proc, hb, lifeline, sfd;
  pid_t self, node_pid, warden, spid;
  int timeout_ms, stall_ms, enforce, use_cache, marked, nice;
  const char *workspace, *cwd;
};

int64_t now_ms(void);
void key_of(const struct stat *st, struct key *k);
int key_eq(const struct key *a, const struct key *b);
int cache_get(const struct key *k, struct verdict *v);
void cache_put(const struct key *k, struct verdict v);
void cache_clear(void);
int gate_loop(struct gate *g);

#endif
