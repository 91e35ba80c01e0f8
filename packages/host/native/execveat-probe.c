// execveat-probe DIR NAME [ARGS…]: opens DIR and calls the execveat(2) system call directly on
// NAME relative to it (not through a libc wrapper that might fall back to execve). With NAME ""
// and DIR a file it uses AT_EMPTY_PATH (fexecve's form). Exit 126 with the errno name on refusal.

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: execveat-probe DIR NAME [ARGS…]\n");
    return 2;
  }
  int empty = argv[2][0] == 0;
  int fd = open(argv[1], (empty ? O_RDONLY : O_PATH | O_DIRECTORY) | O_CLOEXEC);
  if (fd < 0) {
    perror("open");
    return 2;
  }
  char *args[64] = {argv[2][0] ? argv[2] : argv[1]};
  for (int i = 3; i < argc && i < 63; i++) args[i - 2] = argv[i];
  syscall(SYS_execveat, fd, argv[2], args, environ, empty ? AT_EMPTY_PATH : 0);
  printf("execveat refused: %s\n", errno == EPERM ? "EPERM" : errno == EACCES ? "EACCES" : strerror(errno));
  return 126;
}
