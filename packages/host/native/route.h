// Exec routes of the journal record (sandbox-attest §5.5), and what a notice needs to know about
// the decision behind it. See route.c.
#ifndef EXECGATE_ROUTE_H
#define EXECGATE_ROUTE_H
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "gate.h"

enum { ROUTE_DIRECT = 0, ROUTE_INTERPRETER = 1, ROUTE_LOADER = 2 };

// exec_route returns how this exec open of `st` by `pid` came about and notes the interpreter it
// will open next, which it writes to `in` (read through `fd` unless cached for the file's key).
int exec_route(pid_t pid, const struct stat *st, int fd, struct interp *in);
const char *route_name(int route);
// expect_clear forgets the interpreter a refused exec of `pid` would have opened.
void expect_clear(pid_t pid);
// carry_put notes that the exec of the file `k` by `pid` was journaled with its permission event;
// carry_take reports (and forgets) that for the notice of the same open.
void carry_put(pid_t pid, const struct key *k);
int carry_take(pid_t pid, const struct stat *st);
// is_elf reports whether the file starts with the ELF magic (1) or not (0); -1 when it cannot be read.
int is_elf(int fd);
// in_execve reports whether `pid` (under the host /proc `proc`) is inside execve(2)/execveat(2).
int in_execve(int proc, pid_t pid);

#endif
