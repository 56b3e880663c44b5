#include "tune/hash.h"
uint64_t lc_hash64(const void *data, size_t len) {
  const unsigned char *p = data; uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) { h ^= p[i]; h *= 1099511628211ull; }
  return h;
}
