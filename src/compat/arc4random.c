/* arc4random_buf() and arc4random() for the release bundle.
 *
 * The bundle links libarchive (and libstdc++) statically so that it runs on glibc 2.34 and
 * newer. Debian 12's copies of both call arc4random_buf/arc4random, which glibc only gained in
 * 2.36; linking them against glibc would record that version as a requirement, and Ubuntu 22.04
 * (glibc 2.35) would refuse to start the program. These definitions, linked into the program,
 * satisfy those references first, so no versioned glibc symbol is needed. They draw from the
 * kernel's random source through getrandom(2) (glibc 2.25), as glibc's own implementation does;
 * like it, they cannot fail: without any random source the process aborts rather than return
 * predictable bytes. Only built with -DCUDAENV_PORTABLE=ON (docs/install.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <sys/random.h>

/* Fills buf from /dev/urandom: only for kernels older than 3.17, which lack getrandom(2). */
static void fill_from_urandom(unsigned char* buf, size_t size) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) abort();
  while (size > 0) {
    ssize_t got = read(fd, buf, size);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) abort();
    buf += got;
    size -= (size_t)got;
  }
  close(fd);
}

void arc4random_buf(void* buffer, size_t size) {
  unsigned char* out = buffer;
  while (size > 0) {
    ssize_t got = getrandom(out, size, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == ENOSYS) {
      fill_from_urandom(out, size);
      return;
    }
    if (got <= 0) abort();
    out += got;
    size -= (size_t)got;
  }
}

uint32_t arc4random(void) {
  uint32_t value;
  arc4random_buf(&value, sizeof value);
  return value;
}
