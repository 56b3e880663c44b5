/* The Q8/Q4 Winograd weight transforms of the kernel tables (wino_qweights: dequantized in
 * registers) on random odd shapes, F(2x2) and F(4x4): bitwise equal to the table's fp32 transform
 * (wino->weights, weights4) on lc_dequant_rows' values, zeros in the panel rows past noc, and
 * within R roundings of U = G g G^T computed in fp64 from the dequantized weights:
 * |U - U64| <= R u * sum |G| |g| |G^T|. F(2x2): R = 4 (the factors 1/2 are exact; two sums per
 * pass); F(4x4): R = 6 (two sums per pass, the scale F[r] F[s] rounded to fp32 and its product;
 * the products by 2 and 4 are exact, kernels/wino.h). LC_TEST_QUICK=1 runs fewer shapes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/registry.h"
#include "quant/quant.h"
#include "testutil.h"

static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
static const double G4[6][3] = {{1.0 / 4, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};

static double gcoef(int f4, size_t xi, size_t ky, size_t kx) {
  return f4 ? G4[xi / 6][ky] * G4[xi % 6][kx] : G[xi / 4][ky] * G[xi % 4][kx];
}

static long ran, skipped;

static void one_case(const lc_kernels *k, int f4) {
  static const int blocks[] = {0, 16, 32, 64, 128, 256};
  size_t cig = (size_t)(tu_rand_int(0, 3) ? tu_rand_int(1, 80) : tu_rand_int(81, 300));
  size_t oc = (size_t)tu_rand_int(1, 40), K = 9 * cig, nr = k->nr;
  lc_quant_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.format = tu_rand_int(0, 1) ? LC_WEIGHTS_Q4 : LC_WEIGHTS_Q8;
  spec.block = blocks[tu_rand_int(0, 5)];
  spec.asym = tu_rand_int(0, 1);
  spec.kc = cig;
  float *w = malloc(oc * K * sizeof(float));
  tu_fill(w, oc * K, -1.0f, 1.0f);
  lc_qmatrix m;
  lc_status st = lc_quantize(w, oc, K, &spec, &m);
  TU_CHECK(st == LC_OK, "quantize: %s", lc_last_error());
  free(w);
  if (st) return;
  if (!k->wino_qweights_ok(&m)) {
    skipped++;
    lc_qmatrix_free(&m);
    return;
  }
  size_t row0 = (size_t)tu_rand_int(0, (int)oc - 1), left = oc - row0;
  size_t noc = (size_t)tu_rand_int(1, (int)(left < nr ? left : nr));
  size_t ic0 = 16 * (size_t)tu_rand_int(0, (int)((cig - 1) / 16)), n = (size_t)tu_rand_int(1, (int)(cig - ic0));
  size_t nxi = f4 ? 36 : 16, xs = n * nr + (size_t)tu_rand_int(0, 20), nu = nxi * xs;
  float *d = malloc(noc * K * sizeof(float)), *u1 = malloc(nu * sizeof(float)), *u2 = malloc(nu * sizeof(float));
  st = lc_dequant_rows_with(k, &m, row0, noc, 0, K, d, K);
  TU_CHECK(st == LC_OK, "dequant: %s", lc_last_error());
  for (size_t i = 0; i < nu; i++) u1[i] = u2[i] = NAN;
  k->wino_qweights(&m, row0, noc, nr, ic0, n, u1, xs, f4);
  (f4 ? k->wino->weights4 : k->wino->weights)(noc, nr, n, d + ic0, K, cig, 1, u2, xs);
  char desc[160];
  snprintf(desc, sizeof desc, "%s %s %s block %d%s: %zu x %zu ch, rows %zu+%zu of nr %zu, ic %zu+%zu", k->name,
           f4 ? "F(4x4)" : "F(2x2)",
           spec.format == LC_WEIGHTS_Q4 ? "q4" : "q8", spec.block, spec.asym ? " asym" : "", oc, cig, row0, noc, nr,
           ic0, n);
  const double u = ldexp(1.0, -24);
  long bad = 0, badref = 0;
  for (size_t xi = 0; xi < nxi; xi++)
    for (size_t j = 0; j < n; j++)
      for (size_t i = 0; i < nr; i++) {
        float a = u1[xi * xs + j * nr + i], b = u2[xi * xs + j * nr + i];
        if (memcmp(&a, &b, sizeof a) != 0) bad++;
        double ref = 0.0, mag = 0.0;
        for (size_t ky = 0; i < noc && ky < 3; ky++)
          for (size_t kx = 0; kx < 3; kx++) {
            double g = d[i * K + (3 * ky + kx) * cig + ic0 + j], f = gcoef(f4, xi, ky, kx);
            ref += f * g;
            mag += fabs(f * g);
          }
        if (!(fabs((double)a - ref) <= (f4 ? 6 : 4) * u * mag) || (i >= noc && a != 0.0f)) badref++;
      }
  TU_CHECK(bad == 0, "%ld values differ from the fp32 transform [%s]", bad, desc);
  TU_CHECK(badref == 0, "%ld values off the fp64 U (or not 0 past noc) [%s]", badref, desc);
  ran++;
  free(d);
  free(u1);
  free(u2);
  lc_qmatrix_free(&m);
}

int main(void) {
  tu_seed_from_env(1216);
  int cases = getenv("LC_TEST_QUICK") ? 120 : 600;
  for (size_t t = 0; t < lc_kernels_count(); t++) {
    const lc_kernels *k = lc_kernels_at(t);
    if (!k->wino_qweights || !lc_kernels_runs_here(k)) {
      printf("%s: %s\n", k->name, k->wino_qweights ? "not on this CPU" : "no Q8/Q4 transform");
      continue;
    }
    TU_CHECK(k->nr % 16 == 0, "%s: nr %zu", k->name, k->nr);
    for (int s = 0; s < cases; s++) one_case(k, s % 2);
  }
  printf("%ld shapes compared, %ld not eligible (lc_wino_qweights_ok)\n", ran, skipped);
  return tu_finish("test_wino_qweights");
}
