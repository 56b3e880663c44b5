/* Protobuf wire decoder for ONNX. Each message is walked with pb_next; repeated fields are
 * counted in a first pass and filled in a second, so every array is allocated once at its size.
 * All reads are bounds-checked against the enclosing message; errors name offset and field. */
#include "model/onnx_pb.h"

#include <stdlib.h>
#include <string.h>

#include "model/onnx_map.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

typedef struct loader {
  const uint8_t *base; /* start of the file, for offsets in messages */
  lc_onnx_model *m;
  const char *dir;     /* model directory for external data; NULL when loading from memory */
} loader;

typedef struct pb_msg {
  const uint8_t *p;
  size_t len;
  const char *name; /* message type, for errors */
} pb_msg;

typedef struct pb_field {
  uint32_t num;
  int wt;
  uint64_t v;         /* VARINT, I32, I64 */
  const uint8_t *p;   /* LEN */
  size_t len;
  size_t off;         /* file offset of the tag */
} pb_field;

#define OFF(L, ptr) ((size_t)((const uint8_t *)(ptr) - (L)->base))

static int read_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *v) {
  uint64_t r = 0;
  for (int i = 0; i < 10; i++) {
    if (*pos >= n) return 0;
    uint8_t b = p[(*pos)++];
    if (i == 9 && b > 1) return 0; /* more than 64 bits */
    r |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *v = r;
      return 1;
    }
  }
  return 0;
}

/* Next field of msg at *pos: 1 = field, 0 = end, -1 = error (recorded). */
static int pb_next(const loader *L, const pb_msg *msg, size_t *pos, pb_field *f) {
  if (*pos >= msg->len) return 0;
  f->off = OFF(L, msg->p + *pos);
  uint64_t tag;
  if (!read_varint(msg->p, msg->len, pos, &tag)) {
    lc_error(LC_ERR_IO, "onnx: truncated or overlong tag at offset %zu in %s", f->off, msg->name);
    return -1;
  }
  f->num = (uint32_t)(tag >> 3);
  f->wt = (int)(tag & 7);
  if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff) {
    lc_error(LC_ERR_IO, "onnx: bad field number at offset %zu in %s", f->off, msg->name);
    return -1;
  }
  size_t rem = msg->len - *pos;
  switch (f->wt) {
    case WT_VARINT:
      if (read_varint(msg->p, msg->len, pos, &f->v)) return 1;
      break;
    case WT_I64:
      if (rem >= 8) {
        memcpy(&f->v, msg->p + *pos, 8);
        *pos += 8;
        return 1;
      }
      break;
    case WT_I32:
      if (rem >= 4) {
        uint32_t u;
        memcpy(&u, msg->p + *pos, 4);
        f->v = u;
        *pos += 4;
        return 1;
      }
      break;
    case WT_LEN: {
      uint64_t n;
      if (read_varint(msg->p, msg->len, pos, &n) && n <= msg->len - *pos) {
        f->p = msg->p + *pos;
        f->len = (size_t)n;
        *pos += (size_t)n;
        return 1;
      }
      break;
    }
    default:
      lc_error(LC_ERR_IO, "onnx: unsupported wire type %d at offset %zu (%s field %u)", f->wt, f->off,
               msg->name, f->num);
      return -1;
  }
  lc_error(LC_ERR_IO, "onnx: truncated value at offset %zu (%s field %u)", f->off, msg->name, f->num);
  return -1;
}

static lc_status bad_wt(const pb_msg *msg, const pb_field *f) {
  return lc_error(LC_ERR_IO, "onnx: wrong wire type %d at offset %zu (%s field %u)", f->wt, f->off, msg->name,
                  f->num);
}

static lc_status get_str(loader *L, const pb_msg *msg, const pb_field *f, const char **out) {
  if (f->wt != WT_LEN) return bad_wt(msg, f);
  if (f->len > LC_ONNX_MAX_STRING)
    return lc_error(LC_ERR_IO, "onnx: string of %zu bytes at offset %zu (%s field %u) exceeds the limit", f->len,
                    f->off, msg->name, f->num);
  *out = lc_arena_strndup(&L->m->arena, (const char *)f->p, f->len);
  return *out ? LC_OK : lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
}

static lc_status get_int(const pb_msg *msg, const pb_field *f, int64_t *out) {
  if (f->wt != WT_VARINT) return bad_wt(msg, f);
  *out = (int64_t)f->v;
  return LC_OK;
}

static lc_status count_ok(const pb_msg *msg, size_t n) {
  if (n > LC_ONNX_MAX_COUNT) return lc_error(LC_ERR_IO, "onnx: too many elements (%zu) in %s", n, msg->name);
  return LC_OK;
}

/* Repeated scalar kinds: how one element is encoded and stored. */
enum { K_I64, K_I32, K_F32, K_F64 };

/* Counts (out == NULL) or stores the elements of repeated scalar field num, packed or not. */
static lc_status rep_scalars(const loader *L, const pb_msg *msg, uint32_t num, int kind, void *out, size_t *count) {
  size_t pos = 0, n = 0;
  pb_field f;
  int r;
  int fixed = kind == K_F32 ? 4 : kind == K_F64 ? 8 : 0;
  int one_wt = kind == K_F32 ? WT_I32 : kind == K_F64 ? WT_I64 : WT_VARINT;
  while ((r = pb_next(L, msg, &pos, &f)) > 0) {
    if (f.num != num) continue;
    if (f.wt == one_wt) {
      if (out) {
        if (kind == K_I64) ((int64_t *)out)[n] = (int64_t)f.v;
        else if (kind == K_I32) ((int32_t *)out)[n] = (int32_t)(uint32_t)f.v;
        else if (kind == K_F32) { uint32_t u = (uint32_t)f.v; memcpy((float *)out + n, &u, 4); }
        else memcpy((double *)out + n, &f.v, 8);
      }
      n++;
    } else if (f.wt == WT_LEN) {
      if (fixed) {
        if (f.len % (size_t)fixed)
          return lc_error(LC_ERR_IO, "onnx: packed field of %zu bytes is not a multiple of %d at offset %zu (%s field %u)",
                          f.len, fixed, f.off, msg->name, num);
        if (out) memcpy((char *)out + n * (size_t)fixed, f.p, f.len);
        n += f.len / (size_t)fixed;
      } else {
        size_t q = 0;
        uint64_t v;
        while (q < f.len) {
          if (!read_varint(f.p, f.len, &q, &v))
            return lc_error(LC_ERR_IO, "onnx: bad packed varint at offset %zu (%s field %u)", OFF(L, f.p + q),
                            msg->name, num);
          if (out) {
            if (kind == K_I64) ((int64_t *)out)[n] = (int64_t)v;
            else ((int32_t *)out)[n] = (int32_t)(uint32_t)v;
          }
          n++;
        }
      }
    } else {
      return bad_wt(msg, &f);
    }
  }
  if (r < 0) return LC_ERR_IO;
  if (!out && count_ok(msg, n)) return LC_ERR_IO;
  *count = n;
  return LC_OK;
}

/* Counts and stores a repeated scalar field into a fresh arena array. */
static lc_status rep_alloc(loader *L, const pb_msg *msg, uint32_t num, int kind, void **out, size_t *count) {
  size_t n, n2, esz = (kind == K_I32 || kind == K_F32) ? 4 : 8;
  lc_status s = rep_scalars(L, msg, num, kind, NULL, &n);
  if (s) return s;
  *out = NULL;
  *count = n;
  if (!n) return LC_OK;
  *out = lc_arena_alloc(&L->m->arena, n * esz);
  if (!*out) return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
  return rep_scalars(L, msg, num, kind, *out, &n2);
}

/* int32_data of INT8 / INT4 / UINT4 tensors (quantized weights), range-checked: INT8 one value per
 * code, INT4 and UINT4 (as ONNX stores them) one byte of two packed codes per value. */
static lc_status narrow_codes(loader *L, lc_tensor *t, const void *vals, size_t nv, int int4) {
  if (nv != t->nbytes)
    return lc_error(LC_ERR_IO, "onnx: tensor '%s' has %zu int32_data values, dims need %zu%s", t->name, nv, t->nbytes,
                    int4 ? " (two int4 codes each)" : "");
  unsigned char *d = lc_arena_alloc(&L->m->arena, t->nbytes ? t->nbytes : 16);
  if (!d) return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
  int lo = int4 ? 0 : -128, hi = int4 ? 255 : 127;
  for (size_t i = 0; i < nv; i++) {
    int32_t v = ((const int32_t *)vals)[i];
    if (v < lo || v > hi)
      return lc_error(LC_ERR_IO, "onnx: tensor '%s': int32_data value %ld at %zu is out of range [%d, %d] (%s)",
                      t->name, (long)v, i, lo, hi, int4 ? "two 4-bit codes per byte" : "int8");
    d[i] = (unsigned char)(v & 255);
  }
  t->data = d;
  return LC_OK;
}

static lc_status dec_tensor(loader *L, const uint8_t *p, size_t len, lc_tensor *t) {
  pb_msg msg = {p, len, "TensorProto"};
  size_t pos = 0;
  pb_field f;
  int r, has_raw = 0;
  const uint8_t *raw = NULL;
  size_t raw_len = 0;
  int64_t dt = 0, loc_kind = 0, ext_off = 0, ext_len = -1;
  const char *ext_loc = NULL;
  lc_status s = LC_OK;
  while (!s && (r = pb_next(L, &msg, &pos, &f)) > 0) {
    switch (f.num) {
      case 2: s = get_int(&msg, &f, &dt); break;
      case 8: s = get_str(L, &msg, &f, &t->name); break;
      case 9:
        if (f.wt != WT_LEN) return bad_wt(&msg, &f);
        raw = f.p, raw_len = f.len, has_raw = 1;
        break;
      case 14: s = get_int(&msg, &f, &loc_kind); break;
      case 13: { /* StringStringEntryProto */
        if (f.wt != WT_LEN) return bad_wt(&msg, &f);
        pb_msg e = {f.p, f.len, "StringStringEntryProto"};
        size_t q = 0;
        pb_field g;
        const char *key = NULL, *val = NULL;
        while (!s && (r = pb_next(L, &e, &q, &g)) > 0) {
          if (g.num == 1) s = get_str(L, &e, &g, &key);
          else if (g.num == 2) s = get_str(L, &e, &g, &val);
        }
        if (r < 0) return LC_ERR_IO;
        if (s) return s;
        if (key && val) {
          char *endp;
          if (!strcmp(key, "location")) ext_loc = val;
          else if (!strcmp(key, "offset")) ext_off = strtoll(val, &endp, 10);
          else if (!strcmp(key, "length")) ext_len = strtoll(val, &endp, 10);
        }
        break;
      }
      default: break;
    }
  }
  if (s) return s;
  if (r < 0) return LC_ERR_IO;
  if (!t->name) t->name = "";
  int64_t *dims;
  size_t nd;
  if ((s = rep_alloc(L, &msg, 1, K_I64, (void **)&dims, &nd))) return s;
  if (nd > LC_MAX_DIMS)
    return lc_error(LC_ERR_IO, "onnx: tensor '%s' has %zu dims (max %d)", t->name, nd, LC_MAX_DIMS);
  t->ndim = (int)nd;
  for (size_t i = 0; i < nd; i++) {
    if (dims[i] < 0) return lc_error(LC_ERR_IO, "onnx: tensor '%s' has negative dim %lld", t->name, (long long)dims[i]);
    t->dims[i] = dims[i];
  }
  t->dtype = (lc_dtype)(dt >= 0 && dt <= 16 ? dt : dt == LC_DT_INT4 || dt == LC_DT_UINT4 ? dt : 0);
  int int4 = t->dtype == LC_DT_INT4 || t->dtype == LC_DT_UINT4;
  size_t esz = int4 ? 1 : lc_dtype_size(t->dtype), numel;
  if (!esz || dt != (int64_t)t->dtype)
    return lc_error(LC_ERR_IO, "onnx: tensor '%s' has unsupported data_type %lld", t->name, (long long)dt);
  if (lc_tensor_numel(t, &numel) || !lc_mul_sz(numel, esz, &t->nbytes))
    return lc_error(LC_ERR_IO, "onnx: tensor '%s' is too large", t->name);
  if (int4) t->nbytes = numel / 2 + (numel & 1);
  if (loc_kind == 1) {
    if (!t->nbytes) {
      t->data = lc_arena_alloc(&L->m->arena, 16);
      return t->data ? LC_OK : lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
    }
    return lc_onnx_map_external(L->m, L->dir, t, ext_loc, ext_off, ext_len);
  }
  if (has_raw) {
    if (raw_len != t->nbytes)
      return lc_error(LC_ERR_IO, "onnx: tensor '%s': raw_data has %zu bytes, dims need %zu", t->name, raw_len,
                      t->nbytes);
    if ((uintptr_t)raw % esz == 0 && raw_len) {
      t->data = (void *)(uintptr_t)raw; /* zero-copy: the file buffer is private and writable */
      return LC_OK;
    }
    t->data = lc_onnx_copy_bytes(L->m, raw, t->nbytes);
    return t->data ? LC_OK : lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
  }
  /* Typed fields: float_data (4), int32_data (5) for every type of 32 bits or less, int64_data (7),
   * double_data (10). */
  int kind, fld;
  switch (t->dtype) {
    case LC_DT_FLOAT: kind = K_F32, fld = 4; break;
    case LC_DT_INT64: kind = K_I64, fld = 7; break;
    case LC_DT_DOUBLE: kind = K_F64, fld = 10; break;
    default: kind = K_I32, fld = 5; break;
  }
  void *vals;
  size_t nv;
  if ((s = rep_alloc(L, &msg, (uint32_t)fld, kind, &vals, &nv))) return s;
  if (int4 || (kind == K_I32 && t->dtype == LC_DT_INT8)) return narrow_codes(L, t, vals, nv, int4);
  if (nv != numel)
    return lc_error(LC_ERR_IO, "onnx: tensor '%s' has %zu values, dims need %zu", t->name, nv, numel);
  if (kind == K_I32 && esz != 4) { /* narrow int32_data to the element type */
    unsigned char *d = lc_arena_alloc(&L->m->arena, t->nbytes);
    if (!d) return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
    for (size_t i = 0; i < nv; i++) {
      uint32_t v = (uint32_t)((int32_t *)vals)[i];
      if (esz == 1) d[i] = (unsigned char)v;
      else { uint16_t h = (uint16_t)v; memcpy(d + 2 * i, &h, 2); }
    }
    vals = d;
  }
  t->data = vals ? vals : lc_arena_alloc(&L->m->arena, 16); /* empty constants still have data */
  return t->data ? LC_OK : lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
}

static lc_status dec_value_info(loader *L, const uint8_t *p, size_t len, lc_onnx_value_info *v) {
  pb_msg msg = {p, len, "ValueInfoProto"};
  size_t pos = 0;
  pb_field f;
  int r;
  lc_status s = LC_OK;
  for (int i = 0; i < LC_MAX_DIMS; i++) v->dims[i] = -1;
  while (!s && (r = pb_next(L, &msg, &pos, &f)) > 0) {
    if (f.num == 1) {
      s = get_str(L, &msg, &f, &v->name);
    } else if (f.num == 2) { /* TypeProto */
      if (f.wt != WT_LEN) return bad_wt(&msg, &f);
      pb_msg ty = {f.p, f.len, "TypeProto"};
      size_t q = 0;
      pb_field g;
      while (!s && (r = pb_next(L, &ty, &q, &g)) > 0) {
        if (g.num != 1) continue; /* only tensor_type */
        if (g.wt != WT_LEN) return bad_wt(&ty, &g);
        pb_msg tt = {g.p, g.len, "TypeProto.Tensor"};
        size_t q2 = 0;
        pb_field h;
        while (!s && (r = pb_next(L, &tt, &q2, &h)) > 0) {
          if (h.num == 1) {
            int64_t et = 0;
            if (!(s = get_int(&tt, &h, &et))) v->dtype = (lc_dtype)(et >= 0 && et <= 16 ? et : 0);
          } else if (h.num == 2) {
            if (h.wt != WT_LEN) return bad_wt(&tt, &h);
            pb_msg sh = {h.p, h.len, "TensorShapeProto"};
            size_t q3 = 0;
            pb_field d;
            v->has_shape = 1;
            v->ndim = 0;
            while (!s && (r = pb_next(L, &sh, &q3, &d)) > 0) {
              if (d.num != 1) continue;
              if (d.wt != WT_LEN) return bad_wt(&sh, &d);
              if (v->ndim >= LC_MAX_DIMS)
                return lc_error(LC_ERR_IO, "onnx: value '%s' has more than %d dims", v->name ? v->name : "",
                                LC_MAX_DIMS);
              int k = v->ndim++;
              pb_msg dm = {d.p, d.len, "TensorShapeProto.Dimension"};
              size_t q4 = 0;
              pb_field e;
              while (!s && (r = pb_next(L, &dm, &q4, &e)) > 0) {
                if (e.num == 1) {
                  int64_t dv = -1;
                  if (!(s = get_int(&dm, &e, &dv))) v->dims[k] = dv >= 0 ? dv : -1;
                } else if (e.num == 2) {
                  s = get_str(L, &dm, &e, &v->dim_param[k]);
                }
              }
            }
          }
        }
      }
    }
  }
  if (s) return s;
  if (r < 0) return LC_ERR_IO;
  if (!v->name) v->name = "";
  return LC_OK;
}

static lc_status dec_attr(loader *L, const uint8_t *p, size_t len, lc_attr *a) {
  pb_msg msg = {p, len, "AttributeProto"};
  size_t pos = 0;
  pb_field f;
  int r;
  int64_t type = -1, nstr = 0;
  lc_status s = LC_OK;
  while (!s && (r = pb_next(L, &msg, &pos, &f)) > 0) {
    switch (f.num) {
      case 1: s = get_str(L, &msg, &f, &a->name); break;
      case 20: s = get_int(&msg, &f, &type); break;
      case 2: {
        if (f.wt != WT_I32) return bad_wt(&msg, &f);
        uint32_t u = (uint32_t)f.v;
        memcpy(&a->f, &u, 4);
        if (type < 0) a->type = LC_ATTR_FLOAT;
        break;
      }
      case 3: s = get_int(&msg, &f, &a->i); if (type < 0) a->type = LC_ATTR_INT; break;
      case 4: s = get_str(L, &msg, &f, &a->s); if (type < 0) a->type = LC_ATTR_STRING; break;
      case 5: {
        if (f.wt != WT_LEN) return bad_wt(&msg, &f);
        lc_tensor *t = lc_arena_alloc(&L->m->arena, sizeof(*t));
        if (!t) return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
        s = dec_tensor(L, f.p, f.len, t);
        a->t = t;
        if (type < 0) a->type = LC_ATTR_TENSOR;
        break;
      }
      case 9: nstr++; if (f.wt != WT_LEN) return bad_wt(&msg, &f); break;
      default: break;
    }
  }
  if (s) return s;
  if (r < 0) return LC_ERR_IO;
  if (!a->name) return lc_error(LC_ERR_IO, "onnx: attribute without a name at offset %zu", OFF(L, p));
  size_t nf, ni;
  void *fl, *in;
  if ((s = rep_alloc(L, &msg, 7, K_F32, &fl, &nf)) || (s = rep_alloc(L, &msg, 8, K_I64, &in, &ni))) return s;
  a->floats = fl;
  a->ints = in;
  if (type >= 0) a->type = (lc_attr_type)(type <= 8 ? type : 0);
  else if (ni) a->type = LC_ATTR_INTS;
  else if (nf) a->type = LC_ATTR_FLOATS;
  else if (nstr) a->type = LC_ATTR_STRINGS;
  a->n = a->type == LC_ATTR_INTS ? ni : a->type == LC_ATTR_FLOATS ? nf : a->type == LC_ATTR_STRINGS ? (size_t)nstr : 0;
  if (a->type == LC_ATTR_TENSOR && !a->t) return lc_error(LC_ERR_IO, "onnx: tensor attribute '%s' has no tensor", a->name);
  if (a->type == LC_ATTR_STRING && !a->s) a->s = "";
  if (nstr && a->type == LC_ATTR_STRINGS) {
    const char **v = lc_arena_alloc(&L->m->arena, (size_t)nstr * sizeof(*v));
    if (!v) return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
    size_t k = 0;
    pos = 0;
    while (!s && pb_next(L, &msg, &pos, &f) > 0)
      if (f.num == 9) s = get_str(L, &msg, &f, &v[k++]);
    a->strings = v;
  }
  return s;
}

static lc_status dec_node(loader *L, const uint8_t *p, size_t len, lc_node *n) {
  pb_msg msg = {p, len, "NodeProto"};
  size_t pos = 0, ni = 0, no = 0, na = 0;
  pb_field f;
  int r;
  lc_status s = LC_OK;
  while (!s && (r = pb_next(L, &msg, &pos, &f)) > 0) {
    switch (f.num) {
      case 1: ni++; break;
      case 2: no++; break;
      case 5: na++; break;
      case 3: s = get_str(L, &msg, &f, &n->name); break;
      case 4: s = get_str(L, &msg, &f, &n->op_type); break;
      case 7: s = get_str(L, &msg, &f, &n->domain); break;
      default: break;
    }
  }
  if (s) return s;
  if (r < 0) return LC_ERR_IO;
  if (!n->op_type) return lc_error(LC_ERR_IO, "onnx: node at offset %zu has no op_type", OFF(L, p));
  if (!n->name) n->name = "";
  if (!n->domain) n->domain = "";
  n->inputs = lc_arena_alloc(&L->m->arena, ni * sizeof(char *));
  n->outputs = lc_arena_alloc(&L->m->arena, no * sizeof(char *));
  n->attrs = lc_arena_alloc(&L->m->arena, na * sizeof(lc_attr));
  if (!n->inputs || !n->outputs || !n->attrs) return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
  pos = 0;
  while (!s && pb_next(L, &msg, &pos, &f) > 0) {
    if (f.num == 1) s = get_str(L, &msg, &f, &n->inputs[n->n_inputs++]);
    else if (f.num == 2) s = get_str(L, &msg, &f, &n->outputs[n->n_outputs++]);
    else if (f.num == 5) {
      if (f.wt != WT_LEN) return bad_wt(&msg, &f);
      s = dec_attr(L, f.p, f.len, &n->attrs[n->n_attrs++]);
    }
  }
  return s;
}

static lc_status dec_graph(loader *L, const uint8_t *p, size_t len) {
  lc_onnx_model *m = L->m;
  pb_msg msg = {p, len, "GraphProto"};
  size_t pos = 0, cnt[14] = {0};
  pb_field f;
  int r;
  while ((r = pb_next(L, &msg, &pos, &f)) > 0) {
    if (f.num == 1 || f.num == 5 || (f.num >= 11 && f.num <= 13)) {
      if (f.wt != WT_LEN) return bad_wt(&msg, &f);
      cnt[f.num]++;
    }
  }
  if (r < 0) return LC_ERR_IO;
  for (int i = 0; i < 14; i++)
    if (count_ok(&msg, cnt[i])) return LC_ERR_IO;
  m->nodes = lc_arena_alloc(&m->arena, cnt[1] * sizeof(lc_node));
  m->inits = lc_arena_alloc(&m->arena, cnt[5] * sizeof(lc_tensor));
  m->inputs = lc_arena_alloc(&m->arena, cnt[11] * sizeof(lc_onnx_value_info));
  m->outputs = lc_arena_alloc(&m->arena, cnt[12] * sizeof(lc_onnx_value_info));
  m->value_info = lc_arena_alloc(&m->arena, cnt[13] * sizeof(lc_onnx_value_info));
  if (!m->nodes || !m->inits || !m->inputs || !m->outputs || !m->value_info)
    return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
  lc_status s = LC_OK;
  pos = 0;
  while (!s && pb_next(L, &msg, &pos, &f) > 0) {
    switch (f.num) {
      case 1: s = dec_node(L, f.p, f.len, &m->nodes[m->n_nodes++]); break;
      case 5: s = dec_tensor(L, f.p, f.len, &m->inits[m->n_inits++]); break;
      case 11: s = dec_value_info(L, f.p, f.len, &m->inputs[m->n_inputs++]); break;
      case 12: s = dec_value_info(L, f.p, f.len, &m->outputs[m->n_outputs++]); break;
      case 13: s = dec_value_info(L, f.p, f.len, &m->value_info[m->n_value_info++]); break;
      default: break;
    }
  }
  return s;
}

static lc_status dec_model(loader *L, const uint8_t *p, size_t len) {
  pb_msg msg = {p, len, "ModelProto"};
  size_t pos = 0;
  pb_field f;
  int r, have_graph = 0;
  lc_status s = LC_OK;
  while (!s && (r = pb_next(L, &msg, &pos, &f)) > 0) {
    if (f.num == 1) {
      s = get_int(&msg, &f, &L->m->ir_version);
    } else if (f.num == 8) {
      if (f.wt != WT_LEN) return bad_wt(&msg, &f);
      pb_msg op = {f.p, f.len, "OperatorSetIdProto"};
      size_t q = 0;
      pb_field g;
      const char *dom = "";
      int64_t ver = 0;
      while (!s && (r = pb_next(L, &op, &q, &g)) > 0) {
        if (g.num == 1) s = get_str(L, &op, &g, &dom);
        else if (g.num == 2) s = get_int(&op, &g, &ver);
      }
      if (r < 0) return LC_ERR_IO;
      lc_onnx_opset *e = s ? NULL : lc_arena_alloc(&L->m->arena, sizeof(*e));
      if (!s && !e) return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
      if (e) *e = (lc_onnx_opset){dom, ver, L->m->opsets}, L->m->opsets = e;
      if (!s && (!dom[0] || !strcmp(dom, "ai.onnx"))) L->m->opset = ver;
    } else if (f.num == 7) {
      if (f.wt != WT_LEN) return bad_wt(&msg, &f);
      if (have_graph++) return lc_error(LC_ERR_IO, "onnx: second graph at offset %zu", f.off);
      s = dec_graph(L, f.p, f.len);
    }
  }
  if (s) return s;
  if (r < 0) return LC_ERR_IO;
  if (!have_graph) return lc_error(LC_ERR_IO, "onnx: model has no graph");
  return LC_OK;
}

static lc_status load(lc_onnx_model *m, const char *dir, lc_onnx_model **out) {
  loader L = {m->file_map, m, dir};
  lc_status s = dec_model(&L, m->file_map, m->file_len);
  if (s) {
    lc_onnx_free(m);
    return s;
  }
  *out = m;
  return LC_OK;
}

lc_status lc_onnx_load_buffer(const void *buf, size_t len, lc_onnx_model **out) {
  if (!out || (!buf && len)) return lc_error(LC_ERR_INVALID_ARG, "onnx: null argument");
  *out = NULL;
  lc_onnx_model *m = lc_calloc(1, sizeof(*m));
  if (!m) return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
  m->file_owned = 1;
  m->file_len = len;
  if (len) {
    m->file_map = lc_malloc(len);
    if (!m->file_map) {
      lc_free(m);
      return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory for a %zu-byte model", len);
    }
    memcpy(m->file_map, buf, len);
  }
  return load(m, NULL, out);
}


lc_status lc_onnx_load_file(const char *path, lc_onnx_model **out) {
  if (!out || !path) return lc_error(LC_ERR_INVALID_ARG, "onnx: null argument");
  *out = NULL;
  lc_onnx_model *m;
  const char *dir;
  lc_status s = lc_onnx_map_file(path, &m, &dir);
  return s ? s : load(m, dir, out);
}
