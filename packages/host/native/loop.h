// What the modules of the helper's event loop share (sandbox-attest §5.5): loop.c (the poll loop
// and the control channel), decide.c (permission events), notice.c (exec notices), lines.c (the
// lines to the Node side).
#ifndef EXECGATE_LOOP_H
#define EXECGATE_LOOP_H
#include <stdint.h>
#include <sys/fanotify.h>
#include <sys/types.h>
#include "gate.h"

extern struct gate *g;
extern struct counts counts;

// loop.c: is_ours reports whether an event comes from the helper, its warden or the Node side,
// whose opens are never decided.
int is_ours(pid_t pid);

// lines.c
void emit(int urgent, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void flush_out(int block);
int flush_due(void);
// journal_later queues the decision line of the event whose descriptor is `fd` (and takes the
// descriptor); journal_now writes the queued lines in order.
void journal_later(int fd, int allow, int route, char src, uint32_t vid, pid_t pid);
void journal_now(void);
void stop_sandbox(int code) __attribute__((noreturn));

// decide.c
void on_permission(const struct fanotify_event_metadata *m);
void on_verdict(struct verdict v);
int expire(void);
void deny_pending(void);

// notice.c
void on_notice(const struct fanotify_event_metadata *m);

// watch.c: processes running a loader as a program. watch_mount keeps a marked mount's path;
// loader_runs tracks `pid` (whose executable is, or is about to be, the loader `loader`);
// loader_opened reports whether an open by `pid` was a loader's; loaders_ended marks the processes
// that no longer run their loader (or are still execing it) and counts them; loaders_check drops
// the marked ones, once their notices are read (and the notices of opens with the last one).
void watch_mount(const char *path);
void loader_runs(pid_t pid, const struct key *loader);
int loader_opened(pid_t pid);
int loaders_ended(void);
void loaders_check(void);
int loaders_tracked(void);

#endif
