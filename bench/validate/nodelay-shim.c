/* An LD_PRELOAD shim for the cost-model validation's DoT stub (bench/validate/stubs.ts, `--stub-nodelay`): every
 * connect() of a stream socket first sets TCP_NODELAY, since Debian 12's stubby and unbound leave Nagle's algorithm
 * on. Compiled with gcc at run time into the run's work directory. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  static int (*real)(int, const struct sockaddr *, socklen_t);
  if (!real) real = dlsym(RTLD_NEXT, "connect");
  int type = 0; socklen_t l = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) == 0 && type == SOCK_STREAM) { int one = 1; setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); }
  return real(fd, addr, len);
}
