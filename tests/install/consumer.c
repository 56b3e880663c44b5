/* Built against an installed lowconv (pkg-config and find_package) by sh_test_install.sh. */
#include <lowconv.h>
#include <lowconv_model.h>
#include <stdio.h>

int main(void) {
  lc_context *ctx;
  if (lc_context_create(NULL, &ctx)) return 1;
  float w[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0}, x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, y[9];
  lc_conv_desc d;
  lc_conv_desc_init(&d);
  d.in_channels = d.out_channels = 1;
  d.kernel_h = d.kernel_w = 3;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  d.weights = w;
  lc_conv *c;
  lc_conv_shape s;
  if (lc_conv_create(ctx, &d, &c) || lc_conv_prepare(c, 1, 3, 3, &s) || lc_conv_run(c, x, y, NULL, 0)) return 1;
  int ok = 1;
  for (int i = 0; i < 9; i++) ok &= y[i] == x[i]; /* identity kernel */
  lc_conv_destroy(c);
  lc_context_destroy(ctx);
  /* the model API is installed and exported too */
  lc_net *net = NULL;
  static const char junk[] = "not a model";
  ok &= lc_net_load_memory(junk, sizeof junk, NULL, &net) == LC_ERR_IO && !net;
  printf("consumer: %s\n", ok ? "ok" : "wrong output");
  return ok ? 0 : 1;
}
