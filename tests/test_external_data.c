/* External data must be a regular file inside the model's directory, after symlinks: links out of
 * it (to /etc/passwd, to a parent), FIFOs (which used to block open() forever), directories and
 * device files are refused with a message; links that stay inside, subfolders and a model folder
 * reached through a symlink load. The model file itself must be a regular file too. */
#define _DEFAULT_SOURCE /* mkdtemp, symlink, mknod */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lowconv.h"
#include "model/onnx_pb.h"
#include "pbwriter.h"
#include "testutil.h"

static char root[64], dir[128];

/* model.onnx in dir: initializer W [4] float in external data at location loc. */
static void write_model(const char *mdir, const char *loc) {
  buf g = {0}, t = {0}, e = {0};
  f_int(&t, 1, 4);
  f_int(&t, 2, 1);
  f_str(&t, 8, "W");
  f_str(&e, 1, "location");
  f_str(&e, 2, loc);
  f_msg(&t, 13, &e);
  f_int(&t, 14, 1);
  f_msg(&g, 5, &t);
  buf b = pb_model(&g, "", 13);
  char path[256];
  snprintf(path, sizeof path, "%s/model.onnx", mdir);
  TU_CHECK(pb_write_file(&b, path) == 0, "write %s", path);
  free(b.p);
}

static void write_file(const char *path, const float *v) {
  FILE *f = fopen(path, "wb");
  TU_CHECK(f && fwrite(v, sizeof(float), 4, f) == 4, "write %s", path);
  if (f) fclose(f);
}

/* Loads mdir/model.onnx with W at loc: needle NULL = must load with W = want. */
static void expect(const char *mdir, const char *loc, const char *needle, const float *want) {
  write_model(mdir, loc);
  char path[256];
  snprintf(path, sizeof path, "%s/model.onnx", mdir);
  lc_onnx_model *m = NULL;
  alarm(20); /* a blocking open would hang the test: fail it instead */
  lc_status s = lc_onnx_load_file(path, &m);
  alarm(0);
  if (!needle) {
    TU_CHECK(s == LC_OK, "location '%s': %s", loc, lc_last_error());
    if (s == LC_OK) TU_CHECK(!memcmp(m->inits[0].data, want, 16), "location '%s': wrong bytes", loc);
  } else {
    TU_CHECK(s == LC_ERR_IO && strstr(lc_last_error(), needle), "location '%s': status %d, message '%s'", loc, s,
             lc_last_error());
  }
  lc_onnx_free(m);
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/lc_extXXXXXX");
  TU_CHECK(mkdtemp(root) != NULL, "mkdtemp");
  snprintf(dir, sizeof dir, "%s/model", root);
  TU_CHECK(mkdir(dir, 0700) == 0, "mkdir");
  float w[4] = {1, 2, 3, 4}, o[4] = {9, 9, 9, 9};
  char p[256], q[256];
  snprintf(p, sizeof p, "%s/w.bin", dir);
  write_file(p, w);
  snprintf(p, sizeof p, "%s/sub", dir);
  mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/sub/w.bin", dir);
  write_file(p, w);
  snprintf(p, sizeof p, "%s/outside.bin", root);
  write_file(p, o);
  struct { const char *name, *target; } links[] = {
      {"inlink", "w.bin"}, {"sub/uplink", "../w.bin"}, {"passwd", "/etc/passwd"}, {"parent", "../outside.bin"},
      {"zero", "/dev/zero"}, {"self", "."}, {"dangling", "nothere.bin"}};
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, links[i].name);
    TU_CHECK(symlink(links[i].target, p) == 0, "symlink %s", p);
  }
  snprintf(p, sizeof p, "%s/fifo", dir);
  TU_CHECK(mkfifo(p, 0600) == 0, "mkfifo");
  snprintf(p, sizeof p, "%s/adir", dir);
  mkdir(p, 0700);

  expect(dir, "w.bin", NULL, w);
  expect(dir, "sub/w.bin", NULL, w);
  expect(dir, "inlink", NULL, w);          /* a link that stays inside */
  expect(dir, "sub/uplink", NULL, w);      /* .. inside the link, still inside the folder */
  expect(dir, "passwd", "outside the model's directory", NULL);
  expect(dir, "parent", "outside the model's directory", NULL);
  expect(dir, "zero", "outside the model's directory", NULL);
  expect(dir, "fifo", "is not a regular file", NULL);
  expect(dir, "adir", "is not a regular file", NULL);
  expect(dir, "self", "outside the model's directory", NULL); /* the folder itself */
  expect(dir, "dangling", "cannot open external data", NULL);
  expect(dir, "../outside.bin", "must be a relative path", NULL);
  expect(dir, "/etc/passwd", "must be a relative path", NULL);
  /* A device node inside the folder (needs root; skipped otherwise). */
  snprintf(p, sizeof p, "%s/null", dir);
  if (mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0) expect(dir, "null", "is not a regular file", NULL);
  else printf("  mknod not permitted: device-node case skipped\n");
  /* The model folder reached through a symlink: containment is checked on real paths. */
  snprintf(q, sizeof q, "%s/linked", root);
  TU_CHECK(symlink("model", q) == 0, "symlink to the folder");
  expect(q, "w.bin", NULL, w);
  expect(q, "inlink", NULL, w);
  /* The model file itself: a FIFO or a device is refused without blocking. */
  lc_onnx_model *m = NULL;
  snprintf(p, sizeof p, "%s/fifo", dir);
  alarm(20);
  TU_CHECK(lc_onnx_load_file(p, &m) == LC_ERR_IO && strstr(lc_last_error(), "not a regular file"), "model FIFO: %s",
           lc_last_error());
  TU_CHECK(lc_onnx_load_file("/dev/zero", &m) == LC_ERR_IO && strstr(lc_last_error(), "not a regular file"),
           "model /dev/zero: %s", lc_last_error());
  alarm(0);
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  TU_CHECK(system(cmd) == 0, "cleanup");
  return tu_finish("test_external_data");
}
