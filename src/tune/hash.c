#include "tune/hash.h"

#include <string.h>

#define LC_FNV64_PRIME 0x100000001b3ull

uint64_t lc_hash64_update(uint64_t h, const void *data, size_t len) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= LC_FNV64_PRIME;
  }
  return h;
}

uint64_t lc_hash64_str(const char *s) { return lc_hash64(s, strlen(s)); }

char *lc_hash64_hex(uint64_t h, char out[LC_HASH64_HEX_SIZE]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; i--) {
    out[i] = digits[h & 15];
    h >>= 4;
  }
  out[16] = '\0';
  return out;
}

int lc_hash64_parse_hex(const char *s, uint64_t *h) {
  uint64_t v = 0;
  for (int i = 0; i < 16; i++) {
    char c = s[i];
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return 0;
    v = v << 4 | (uint64_t)d;
  }
  *h = v;
  return 1;
}
