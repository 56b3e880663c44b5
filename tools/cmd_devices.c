/* `lowconv devices`: the CPU and every OpenCL platform/device, with fingerprints and measured
 * limits (fp32 FMA rate, read bandwidth, launch latency). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "json.h"
#include "lowconv.h"
#if LC_HAVE_OPENCL
#include "api/context.h"
#include "backend/opencl/cl_backend.h"
#endif

static const char devices_help[] =
    "usage: lowconv devices [--json] [--no-measure]\n"
    "Lists the CPU and every OpenCL device (platform P, device D: use --device opencl:P:D).\n"
    "  --json         one JSON object per device\n"
    "  --no-measure   skip the micro-benchmarks (FMA rate, read bandwidth, launch latency);\n"
    "                 measured once per device and driver, then read from the tuning cache\n";

typedef struct dev_opts {
  int json, measure, count;
} dev_opts;

#if LC_HAVE_OPENCL
static void show(void *u, int p, int d, const lc_cl_dev_info *in) {
  dev_opts *o = u;
  o->count++;
  lc_cl_limits lim = {0, 0, 0};
  const char *why = NULL;
  int dp4a = 0;
  if (o->measure) {
    lc_context_params cp;
    lc_context_params_init(&cp);
    cp.backend = LC_BACKEND_OPENCL, cp.cl_platform = p, cp.cl_device = d;
    lc_context *ctx;
    if (lc_context_create(&cp, &ctx) || lc_cl_limits_get(ctx, &lim)) {
      why = lc_last_error();
    } else {
      dp4a = ((lc_cl_ctx *)ctx->dev)->rt->info.has_dp4a;
      lc_context_destroy(ctx);
    }
  }
  if (o->json) {
    printf("{\"device\":\"opencl:%d:%d\",\"platform\":", p, d);
    json_string(stdout, in->platform);
    printf(",\"name\":");
    json_string(stdout, in->device);
    printf(",\"driver\":");
    json_string(stdout, in->driver);
    printf(",\"version\":");
    json_string(stdout, in->version);
    printf(",\"opencl_c\":");
    json_string(stdout, in->c_version);
    printf(",\"compute_units\":%u,\"global_mem\":%llu,\"local_mem\":%llu,\"max_alloc\":%llu,\"fingerprint\":",
           (unsigned)in->compute_units, (unsigned long long)in->global_mem, (unsigned long long)in->local_mem,
           (unsigned long long)in->max_alloc);
    json_string(stdout, in->fingerprint);
    if (o->measure && !why)
      printf(",\"fma_gflops\":%.1f,\"read_gbs\":%.1f,\"launch_us\":%.2f,\"dp4a\":%d", lim.fma_gflops, lim.read_gbs,
             lim.launch_us, dp4a);
    if (why) {
      printf(",\"error\":");
      json_string(stdout, why);
    }
    printf("}\n");
    return;
  }
  printf("opencl:%d:%d  %s (%s)\n", p, d, in->device, in->platform);
  printf("  %s, driver %s, %s, %u compute units, %.1f GiB memory, %llu KiB local, max alloc %.1f GiB\n",
         in->version, in->driver, in->c_version, (unsigned)in->compute_units, (double)in->global_mem / (1 << 30),
         (unsigned long long)in->local_mem >> 10, (double)in->max_alloc / (1 << 30));
  printf("  fingerprint: %s\n", in->fingerprint);
  if (why) printf("  not measured: %s\n", why);
  else if (o->measure)
    printf("  measured: fp32 FMA %.1f GFLOP/s, read %.1f GB/s, %.2f us per back-to-back launch; dp4a %s\n",
           lim.fma_gflops, lim.read_gbs, lim.launch_us, dp4a ? "yes (inline PTX probe)" : "no");
}
#endif

int cmd_devices(int argc, char **argv) {
  dev_opts o = {0, 1, 0};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) o.json = 1;
    else if (!strcmp(argv[i], "--no-measure")) o.measure = 0;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(devices_help, stdout);
      return 0;
    } else {
      fprintf(stderr, "lowconv devices: unknown option '%s' (valid: --json, --no-measure, --help)\n", argv[i]);
      return 2;
    }
  }
  lc_context *cpu;
  if (!lc_context_create(NULL, &cpu)) {
    if (o.json) printf("{\"device\":\"cpu\",\"isa\":\"%s\"}\n", lc_context_isa_name(cpu));
    else printf("cpu  kernels: %s\n", lc_context_isa_name(cpu));
    lc_context_destroy(cpu);
  }
#if LC_HAVE_OPENCL
  if (lc_cl_enumerate(show, &o)) {
    if (o.json) {
      printf("{\"device\":\"opencl\",\"error\":");
      json_string(stdout, lc_last_error());
      printf("}\n");
    } else {
      printf("opencl: %s\n", lc_last_error());
    }
  } else if (!o.count) {
    printf(o.json ? "{\"device\":\"opencl\",\"error\":\"no OpenCL device\"}\n" : "opencl: platforms found, but no device\n");
  }
#else
  printf(o.json ? "{\"device\":\"opencl\",\"error\":\"not built: no CL/cl.h at build time\"}\n"
                : "opencl: backend not built (no CL/cl.h at build time; Debian: opencl-c-headers)\n");
#endif
  return 0;
}
