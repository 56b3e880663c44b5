/* .npy reader/writer: round trips, v1/v2 headers, and malformed files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lowconv.h"
#include "model/npy.h"
#include "testutil.h"
#include "util/alloc.h"

static size_t mk(unsigned char *out, int ver, const char *dict, const void *data, size_t n) {
  size_t dl = strlen(dict), hl = dl + 1, off = ver == 1 ? 10 : 12;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)ver;
  out[7] = 0;
  out[8] = (unsigned char)(hl & 0xff);
  out[9] = (unsigned char)(hl >> 8);
  if (ver != 1) out[10] = out[11] = 0;
  memcpy(out + off, dict, dl);
  out[off + dl] = '\n';
  memcpy(out + off + hl, data, n);
  return off + hl + n;
}

static void expect_err(const void *b, size_t n, const char *needle) {
  lc_tensor t = {0};
  lc_status s = lc_npy_parse(b, n, &t);
  TU_CHECK(s == LC_ERR_IO && strstr(lc_last_error(), needle), "want '%s', got %d '%s'", needle, s, lc_last_error());
  if (!s) lc_free(t.data);
}

int main(void) {
  unsigned char b[512];
  float f[6] = {1, 2, 3, 4, 5, -6};
  size_t base = lc_alloc_current_bytes();
  for (int ver = 1; ver <= 2; ver++) {
    size_t n = mk(b, ver, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f, sizeof f);
    lc_tensor t = {0};
    lc_status s = lc_npy_parse(b, n, &t);
    TU_CHECK(s == LC_OK && t.dtype == LC_DT_FLOAT && t.ndim == 2 && t.dims[1] == 3 && t.nbytes == 24 &&
                 ((float *)t.data)[5] == -6, "v%d parse: %s", ver, lc_last_error());
    lc_free(t.data);
    /* every truncation fails cleanly */
    for (size_t k = 0; k < n; k++) {
      s = lc_npy_parse(b, k, &t);
      TU_CHECK(s == LC_ERR_IO, "prefix %zu accepted", k);
      if (!s) lc_free(t.data);
    }
  }
  int64_t iv[1] = {-42};
  size_t n = mk(b, 1, "{'shape': (), 'fortran_order': False, 'descr': '<i8'}", iv, 8);
  lc_tensor t = {0};
  TU_CHECK(lc_npy_parse(b, n, &t) == LC_OK && t.ndim == 0 && t.dtype == LC_DT_INT64 && ((int64_t *)t.data)[0] == -42,
           "scalar i8: %s", lc_last_error());
  lc_free(t.data);
  n = mk(b, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", f, 2);
  expect_err(b, n, "not supported");
  n = mk(b, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", f, 4);
  expect_err(b, n, "Fortran");
  n = mk(b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f, 4);
  expect_err(b, n, "data has 4 bytes, shape needs 12");
  n = mk(b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", f, 4);
  expect_err(b, n, "too large");
  n = mk(b, 1, "{'descr': '<f4', 'shape': (1,), }", f, 4);
  expect_err(b, n, "lacks");
  n = mk(b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", f, 4);
  expect_err(b, n, "unexpected header key");
  n = mk(b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", f, 4);
  expect_err(b, n, "more than 8 dims");
  n = mk(b, 1, "['descr']", f, 4);
  expect_err(b, n, "not a dict");
  n = mk(b, 7, "{}", f, 4);
  expect_err(b, n, "version 7");
  expect_err("hello world!", 12, "bad magic");

  /* write / read round trip, including a 3-D int64 tensor */
  char path[64];
  snprintf(path, sizeof path, "test_npy_%d.npy", (int)getpid());
  int64_t d3[24];
  for (int i = 0; i < 24; i++) d3[i] = (int64_t)i * 1000000007LL;
  lc_tensor w = {.dtype = LC_DT_INT64, .ndim = 3, .dims = {2, 3, 4}, .data = d3, .nbytes = sizeof d3};
  TU_CHECK(lc_npy_write(path, &w) == LC_OK, "write: %s", lc_last_error());
  lc_tensor r = {0};
  TU_CHECK(lc_npy_read(path, &r) == LC_OK && r.ndim == 3 && r.dims[2] == 4 && r.nbytes == sizeof d3 &&
               !memcmp(r.data, d3, sizeof d3), "round trip: %s", lc_last_error());
  lc_free(r.data);
  lc_tensor w1 = {.dtype = LC_DT_FLOAT, .ndim = 1, .dims = {6}, .data = f, .nbytes = sizeof f};
  TU_CHECK(lc_npy_write(path, &w1) == LC_OK && lc_npy_read(path, &r) == LC_OK && r.ndim == 1 && r.dims[0] == 6 &&
               !memcmp(r.data, f, sizeof f), "1-D round trip: %s", lc_last_error());
  lc_free(r.data);
  remove(path);
  TU_CHECK(lc_npy_read(path, &r) == LC_ERR_IO && strstr(lc_last_error(), "cannot open"), "missing file");
  TU_CHECK(lc_alloc_current_bytes() == base, "leak");
  return tu_finish("test_npy");
}
