/* A tiny protobuf writer for hand-made ONNX models in the C tests, and a few ONNX builders on top
 * (value info, float initializers, nodes, the model around a graph). Header-only (static inline)
 * because each tests/test_*.c links only with testutil.c. Builders consume (free) the messages
 * they embed, so a test writes a model top-down without bookkeeping. */
#ifndef LC_TEST_PBWRITER_H
#define LC_TEST_PBWRITER_H

#include <stdint.h>
#include <stdio.h>
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
  if (n) memcpy(b->p + b->n, d, n);
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

/* TensorProto with raw_data (elem: ONNX data type, esz bytes each), as initializer of graph g
 * (num 5) or as a tensor attribute's value (num 5 of an AttributeProto as well). */
static inline void pb_tensor(buf *g, unsigned num, const char *name, int elem, int nd, const int64_t *dims,
                             const void *data, size_t nbytes) {
  buf t = {0};
  for (int i = 0; i < nd; i++) f_int(&t, 1, dims[i]);
  f_int(&t, 2, elem);
  f_str(&t, 8, name);
  f_bytes(&t, 9, data, nbytes);
  f_msg(g, num, &t);
}

/* NodeProto with comma-separated input and output names ("" entries are absent inputs) and
 * attributes already encoded in attrs (consumed; may be NULL). */
static inline void pb_node(buf *g, const char *op, const char *ins, const char *outs, const char *name, buf *attrs) {
  buf n = {0};
  const char *lists[2] = {ins, outs};
  for (int l = 0; l < 2; l++)
    for (const char *s = lists[l]; s && *s;) {
      const char *e = strchr(s, ',');
      size_t len = e ? (size_t)(e - s) : strlen(s);
      f_bytes(&n, (unsigned)(l + 1), s, len);
      s = e ? e + 1 : s + len;
    }
  f_str(&n, 3, name);
  f_str(&n, 4, op);
  if (attrs && attrs->n) put(&n, attrs->p, attrs->n);
  if (attrs) {
    free(attrs->p);
    memset(attrs, 0, sizeof *attrs);
  }
  f_msg(g, 1, &n);
}

/* AttributeProto of INTS / INT / FLOAT into attrs (field 5 of a node). */
static inline void pb_attr_ints(buf *attrs, const char *name, int n, const int64_t *v) {
  buf a = {0};
  f_str(&a, 1, name);
  f_int(&a, 20, 7);
  for (int i = 0; i < n; i++) f_int(&a, 8, v[i]);
  f_msg(attrs, 5, &a);
}
static inline void pb_attr_int(buf *attrs, const char *name, int64_t v) {
  buf a = {0};
  f_str(&a, 1, name);
  f_int(&a, 20, 2);
  f_int(&a, 3, v);
  f_msg(attrs, 5, &a);
}

/* ModelProto: IR 8, one opset entry for domain dom (NULL = none), the graph g (consumed). */
static inline buf pb_model(buf *g, const char *dom, int64_t opset) {
  buf m = {0}, op = {0};
  f_int(&m, 1, 8);
  if (dom) {
    f_str(&op, 1, dom);
    f_int(&op, 2, opset);
    f_msg(&m, 8, &op);
  }
  f_str(g, 2, "g");
  f_msg(&m, 7, g);
  return m;
}

/* Writes b to path; 0 on success. */
static inline int pb_write_file(const buf *b, const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(b->p, 1, b->n, f);
  return fclose(f) == 0 && w == b->n ? 0 : -1;
}

#endif
