// Exec routes of the journal record (sandbox-attest §5.5). See route.c.
#ifndef EXECGATE_ROUTE_H
#define EXECGATE_ROUTE_H
#include <sys/stat.h>
#include <sys/types.h>

enum { ROUTE_DIRECT = 0, ROUTE_INTERPRETER = 1, ROUTE_LOADER = 2 };

int exec_route(pid_t pid, const struct stat *st, int fd);
const char *route_name(int route);

#endif
