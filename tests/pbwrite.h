/* A tiny protobuf writer for tests that build ONNX models by hand (field numbers from onnx.proto). */
#ifndef LC_TESTS_PBWRITE_H
#define LC_TESTS_PBWRITE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
  unsigned char *p;
  size_t n, cap;
} buf;

static inline void put(buf *b, const void *d, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, d, n);
  b->n += n;
}
static inline void varint(buf *b, uint64_t v) {
  unsigned char c;
  do {
    c = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) c |= 0x80;
    put(b, &c, 1);
  } while (v);
}
static inline void tag(buf *b, unsigned num, int wt) { varint(b, (uint64_t)num << 3 | (unsigned)wt); }
static inline void f_int(buf *b, unsigned num, int64_t v) { tag(b, num, 0); varint(b, (uint64_t)v); }
static inline void f_bytes(buf *b, unsigned num, const void *d, size_t n) { tag(b, num, 2); varint(b, n); put(b, d, n); }
static inline void f_str(buf *b, unsigned num, const char *s) { f_bytes(b, num, s, strlen(s)); }
static inline void f_msg(buf *b, unsigned num, buf *m) { f_bytes(b, num, m->p, m->n); free(m->p); memset(m, 0, sizeof *m); }
static inline void f_float(buf *b, unsigned num, float f) { tag(b, num, 5); put(b, &f, 4); }

/* ModelProto's ir_version and the default-domain opset import. */
static inline void pb_model_header(buf *m, int64_t ir_version, int64_t opset) {
  buf op = {0};
  f_int(m, 1, ir_version);
  f_str(&op, 1, "");
  f_int(&op, 2, opset);
  f_msg(m, 8, &op);
}

/* ValueInfoProto field `num` of a graph: dims[i] < 0 are symbolic, named syms[i]. */
static inline void value_info_syms(buf *g, unsigned num, const char *name, int elem, int nd, const int64_t *dims,
                                   const char *const *syms) {
  buf vi = {0}, ty = {0}, tt = {0}, sh = {0};
  for (int i = 0; i < nd; i++) {
    buf d = {0};
    if (dims[i] >= 0) f_int(&d, 1, dims[i]);
    else f_str(&d, 2, syms[i]);
    f_msg(&sh, 1, &d);
  }
  f_int(&tt, 1, elem);
  f_msg(&tt, 2, &sh);
  f_msg(&ty, 1, &tt);
  f_str(&vi, 1, name);
  f_msg(&vi, 2, &ty);
  f_msg(g, num, &vi);
}

/* The same with one name for every symbolic dim. */
static inline void value_info(buf *g, unsigned num, const char *name, int elem, int nd, const int64_t *dims,
                              const char *sym) {
  const char *syms[8] = {sym, sym, sym, sym, sym, sym, sym, sym};
  value_info_syms(g, num, name, elem, nd, dims, syms);
}

#endif
