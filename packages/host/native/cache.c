// The stat-keyed decision cache of the exec gate (sandbox-attest §5.5): open addressing over a
// fixed table; a full probe window overwrites its first slot (an eviction only costs a re-hash).
#include <string.h>
#include "gate.h"

#define SLOTS 65536u
#define PROBE 8u

struct slot {
  struct key k;
  struct verdict v;
  int used;
};
static struct slot table[SLOTS];

void key_of(const struct stat *st, struct key *k) {
  memset(k, 0, sizeof *k);
  k->dev = st->st_dev;
  k->ino = st->st_ino;
  k->size = st->st_size;
  k->mtime_s = st->st_mtim.tv_sec;
  k->mtime_ns = st->st_mtim.tv_nsec;
  k->ctime_s = st->st_ctim.tv_sec;
  k->ctime_ns = st->st_ctim.tv_nsec;
}

int key_eq(const struct key *a, const struct key *b) { return memcmp(a, b, sizeof *a) == 0; }

static uint32_t hash_key(const struct key *k) {
  uint64_t h = 1469598103934665603ull;
  const unsigned char *p = (const unsigned char *)k;
  for (size_t i = 0; i < sizeof *k; i++) h = (h ^ p[i]) * 1099511628211ull;
  return (uint32_t)(h ^ (h >> 32));
}

int cache_get(const struct key *k, struct verdict *v) {
  uint32_t h = hash_key(k);
  for (uint32_t i = 0; i < PROBE; i++) {
    struct slot *s = &table[(h + i) % SLOTS];
    if (!s->used) return 0;
    if (key_eq(&s->k, k)) {
      *v = s->v;
      return 1;
    }
  }
  return 0;
}

void cache_put(const struct key *k, struct verdict v) {
  uint32_t h = hash_key(k);
  struct slot *victim = &table[h % SLOTS];
  for (uint32_t i = 0; i < PROBE; i++) {
    struct slot *s = &table[(h + i) % SLOTS];
    if (!s->used || key_eq(&s->k, k)) {
      victim = s;
      break;
    }
  }
  victim->k = *k;
  victim->v = v;
  victim->used = 1;
}

void cache_clear(void) { memset(table, 0, sizeof table); }
