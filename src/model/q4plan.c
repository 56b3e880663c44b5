#include "model/q4plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/graph.h"
#include "tune/blob.h"
#include "tune/cache_dir.h"
#include "tune/cache_file.h"
#include "tune/hash.h"
#include "util/alloc.h"
#include "util/error.h"

extern char **environ;

#define PLAN_MAGIC 0x50513443u /* "C4QP" */
#define PLAN_MAX_TEXT ((size_t)1 << 20)
#define PATH_LEN 4096

int lc_model_is_quantized(const lc_model *m) {
  for (int i = 0; m && i < m->n_nodes; i++)
    if (!strcmp(m->nodes[i].n.op_type, "DequantizeLinear")) return 1;
  return 0;
}

static void quick(lc_q4plan *p, const char *why) {
  p->used = p->from_cache = 0;
  snprintf(p->summary, sizeof p->summary, "quick rule (%s)", why);
}

static long env_long(const char *name, long dflt, long lo, long hi) {
  const char *e = getenv(name);
  if (!e || !*e) return dflt;
  char *end;
  errno = 0;
  long v = strtol(e, &end, 10);
  if (errno || *end || v < lo || v > hi) {
    fprintf(stderr, "lowconv: warning: %s=%s is not an integer in %ld..%ld; using %ld\n", name, e, lo, hi, dflt);
    return dflt;
  }
  return v;
}

/* FNV-1a of a whole file and its size; 0 on success. */
static int hash_file(const char *path, uint64_t *h, uint64_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  unsigned char *buf = lc_malloc(1 << 20);
  if (!buf) {
    fclose(f);
    return -1;
  }
  *h = LC_HASH64_INIT;
  *size = 0;
  size_t n;
  while ((n = fread(buf, 1, 1 << 20, f)) > 0) {
    *h = lc_hash64_update(*h, buf, n);
    *size += n;
  }
  int bad = ferror(f);
  lc_free(buf);
  fclose(f);
  return bad ? -1 : 0;
}

typedef struct entry {
  char dir[PATH_LEN], plan[PATH_LEN], lock[PATH_LEN], final_dir[PATH_LEN], none[PATH_LEN], key[512];
} entry;

/* A failed plan is noted (KEY.none, holding the interpreter that failed) so that later loads of
 * the model with the same interpreter do not run it again for nothing (seconds of Python start-up
 * on every load where the package is missing); the note holds for a day, or until removed. */
#define PLAN_RETRY_S (24L * 3600)

static const char *plan_python(void) {
  const char *py = getenv("LOWCONV_PYTHON");
  return py && *py ? py : "python3";
}

static int noted_failure(const entry *e) {
  struct stat st;
  if (stat(e->none, &st)) return 0;
  time_t now = time(NULL);
  if (now < st.st_mtime || now - st.st_mtime >= PLAN_RETRY_S) return 0;
  char who[PATH_LEN] = "";
  FILE *f = fopen(e->none, "r");
  if (!f) return 0;
  int ok = fgets(who, sizeof who, f) != NULL;
  fclose(f);
  who[strcspn(who, "\n")] = 0;
  return ok && !strcmp(who, plan_python());
}

static void note_failure(const entry *e) {
  int fd = open(e->none, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    if (fd >= 0) close(fd);
    return;
  }
  fprintf(f, "%s\nthis interpreter could not make the q4 plan; lowconv tries again after a day or once this file "
          "is removed\n", plan_python());
  fclose(f);
}

static int fmt_path(char *out, const char *a, const char *b, const char *c) {
  int w = snprintf(out, PATH_LEN, "%s%s%s", a, b, c);
  return w < 0 || w >= PATH_LEN ? -1 : 0;
}

/* The files of a calibrated entry, hashed: "onnx SIZE HASH\ndata SIZE HASH\n" (data if present). */
static int files_text(const char *dir, char *out, size_t n) {
  char f[PATH_LEN];
  uint64_t h, sz;
  if (fmt_path(f, dir, "/model.onnx", "") || hash_file(f, &h, &sz)) return -1;
  char hex[LC_HASH64_HEX_SIZE];
  int w = snprintf(out, n, "onnx %llu %s\n", (unsigned long long)sz, lc_hash64_hex(h, hex));
  if (fmt_path(f, dir, "/model.onnx.data", "")) return -1;
  if (access(f, F_OK) == 0) {
    if (hash_file(f, &h, &sz)) return -1;
    size_t l = (size_t)w;
    w += snprintf(out + l, n - l, "data %llu %s\n", (unsigned long long)sz, lc_hash64_hex(h, hex));
  }
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Reads the entry: 1 = valid (p->path, p->summary set), 0 = missing, -1 = unusable (warned). */
static int read_entry(const entry *e, lc_q4plan *p) {
  void *data;
  size_t len;
  lc_cache_reason why;
  if (lc_blob_read_why(e->plan, PLAN_MAGIC, e->key, &data, &len, &why)) {
    if (why == LC_CACHE_MISSING) return 0;
    fprintf(stderr, "lowconv: warning: %s; the q4 plan is made again\n", lc_last_error());
    return -1;
  }
  char *t = data, files[256];
  int ok = len < PLAN_MAX_TEXT && memchr(t, 0, len) == NULL;
  char *txt = ok ? lc_malloc(len + 1) : NULL;
  if (txt) {
    memcpy(txt, t, len);
    txt[len] = 0;
  }
  lc_free(data);
  if (!txt) {
    fprintf(stderr, "lowconv: warning: q4 plan %s: unreadable text; made again\n", e->plan);
    return -1;
  }
  /* the files line(s) come first, then "summary ..." */
  char *sum = strstr(txt, "summary ");
  int r = 1;
  if (!sum || files_text(e->final_dir, files, sizeof files) || (size_t)(sum - txt) != strlen(files) ||
      memcmp(txt, files, strlen(files))) {
    fprintf(stderr, "lowconv: warning: q4 plan %s: the calibrated file in %s is missing or changed; made again\n",
            e->plan, e->final_dir);
    r = -1;
  } else {
    char *nl = strchr(sum, '\n');
    if (nl) *nl = 0;
    snprintf(p->summary, sizeof p->summary, "%s", sum + 8);
    if (fmt_path(p->path, e->final_dir, "/model.onnx", "")) r = -1;
  }
  lc_free(txt);
  return r;
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  char f[PATH_LEN];
  while ((de = readdir(d)) != NULL) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    if (!fmt_path(f, dir, "/", de->d_name)) remove(f);
  }
  closedir(d);
  rmdir(dir);
}

/* Runs the quantizer into tmp; 0 when it wrote a file (targets met or not). */
static int run_quantizer(const char *model, const char *tmp, int block, long samples, long timeout) {
  const char *py = plan_python();
  char out[PATH_LEN], plan[PATH_LEN], blk[16], ns[16];
  if (fmt_path(out, tmp, "/model.onnx", "") || fmt_path(plan, tmp, "/plan.txt", "")) return -1;
  snprintf(blk, sizeof blk, "%d", block);
  snprintf(ns, sizeof ns, "%ld", samples);
  char *argv[] = {(char *)py, "-m", "lowconv", "quantize", (char *)model, "-o", out, "--block", blk,
                  "--samples", ns, "--plan-file", plan, NULL};
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa)) return -1;
  pid_t pid;
  fflush(NULL);
  int e = posix_spawn_file_actions_adddup2(&fa, 2, 1); /* its log on our stderr: stdout may be data */
  if (!e) e = posix_spawnp(&pid, py, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (e) {
    fprintf(stderr, "lowconv: warning: cannot run %s (%s) for the q4 plan\n", py, strerror(e));
    return -1;
  }
  int st = 0;
  struct timespec t0, now, nap = {0, 100 * 1000 * 1000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    pid_t w = waitpid(pid, &st, timeout > 0 ? WNOHANG : 0);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return -1;
    if (w < 0) continue;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - t0.tv_sec >= timeout) {
      fprintf(stderr, "lowconv: warning: the q4 plan took more than LOWCONV_Q4_TIMEOUT=%ld s; stopped\n", timeout);
      kill(pid, SIGTERM);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      return -1;
    }
    nanosleep(&nap, NULL);
  }
  /* 0: targets met; 3: file written, targets missed (the quantizer warned) */
  if (WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3) && access(plan, R_OK) == 0) return 0;
  fprintf(stderr, "lowconv: warning: %s -m lowconv quantize failed (%s %d)%s\n", py,
          WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
          WIFEXITED(st) && WEXITSTATUS(st) == 1 ? ": is the lowconv Python package installed (LOWCONV_PYTHON)?" : "");
  return -1;
}

/* Makes the entry (under the entry's lock); 0 on success with p filled. */
static int make_entry(const char *model, const entry *e, int block, lc_q4plan *p) {
  long samples = env_long("LOWCONV_Q4_SAMPLES", LC_Q4PLAN_SAMPLES, 1, 1000);
  long timeout = env_long("LOWCONV_Q4_TIMEOUT", 0, 0, 1L << 30);
  char tmp[PATH_LEN], pidtxt[32];
  snprintf(pidtxt, sizeof pidtxt, ".tmp%ld", (long)getpid());
  if (fmt_path(tmp, e->final_dir, pidtxt, "")) return -1;
  remove_dir(tmp);
  if (mkdir(tmp, 0700)) return -1;
  fprintf(stderr, "lowconv: choosing q4 precision per layer for %s (once: the plan is cached in %s; "
          "--weights q4:fast or LOWCONV_Q4_FAST=1 skip it)\n", model, e->dir);
  if (run_quantizer(model, tmp, block, samples, timeout)) {
    remove_dir(tmp);
    return -1;
  }
  char plan[PATH_LEN];
  void *raw = NULL;
  size_t len = 0;
  lc_cache_reason why;
  int r = fmt_path(plan, tmp, "/plan.txt", "") || lc_file_read_all(plan, PLAN_MAX_TEXT, &raw, &len, &why) ? -1 : 0;
  char *txt = r ? NULL : lc_malloc(len + 1); /* the file's bytes are not a C string */
  if (txt) {
    memcpy(txt, raw, len);
    txt[len] = 0;
  }
  lc_free(raw);
  if (!txt) r = -1;
  remove_dir(e->final_dir);
  if (!r && (rename(tmp, e->final_dir) || fmt_path(plan, e->final_dir, "/plan.txt", ""))) r = -1;
  char files[256] = "";
  if (!r && files_text(e->final_dir, files, sizeof files)) r = -1;
  const char *sum = !r ? strstr(txt, "summary ") : NULL;
  size_t fl = strlen(files), sl = sum ? len - (size_t)(sum - txt) : 0;
  char *payload = sum ? lc_malloc(fl + sl + 1) : NULL;
  if (!payload) r = -1;
  if (!r) {
    memcpy(payload, files, fl);
    memcpy(payload + fl, sum, sl);
    payload[fl + sl] = 0;
    if (memchr(payload, 0, fl + sl)) r = -1; /* a NUL in the quantizer's text */
  }
  if (!r) {
    if (lc_blob_write(e->plan, PLAN_MAGIC, e->key, payload, fl + sl))
      fprintf(stderr, "lowconv: warning: %s; the q4 plan is used but not kept\n", lc_last_error());
    const char *nl = strchr(sum, '\n');
    snprintf(p->summary, sizeof p->summary, "%.*s", (int)(nl ? (size_t)(nl - sum) - 8 : strlen(sum + 8)), sum + 8);
    r = fmt_path(p->path, e->final_dir, "/model.onnx", "");
  }
  lc_free(payload);
  lc_free(txt);
  if (r) remove_dir(tmp);
  return r;
}

static int entry_paths(const char *model, int block, entry *e) {
  char root[PATH_LEN];
  if (lc_cache_dir_default(root, sizeof root) || !root[0]) return -1;
  uint64_t h, sz;
  if (hash_file(model, &h, &sz)) return -1;
  char hex[LC_HASH64_HEX_SIZE], khex[LC_HASH64_HEX_SIZE];
  long samples = env_long("LOWCONV_Q4_SAMPLES", LC_Q4PLAN_SAMPLES, 1, 1000);
  /* "q4plan N": the quantizer's policy version; a new policy makes its plans again (2: margin.py) */
  snprintf(e->key, sizeof e->key, "q4plan 2 model %s size %llu block %d samples %ld target cosine 0.995 argmax 0.99",
           lc_hash64_hex(h, hex), (unsigned long long)sz, block, samples);
  lc_hash64_hex(lc_hash64_str(e->key), khex);
  if (fmt_path(e->dir, root, "/q4plan", "") || fmt_path(e->final_dir, e->dir, "/", khex) ||
      fmt_path(e->lock, e->final_dir, ".lock", "") || fmt_path(e->plan, e->final_dir, ".plan", "") ||
      fmt_path(e->none, e->final_dir, ".none", ""))
    return -1;
  return lc_mkdir_p(e->dir, 0700) ? -1 : 0;
}

lc_status lc_q4plan_load(const char *path, int block, lc_model **m, lc_q4plan *p) {
  memset(p, 0, sizeof *p);
  *m = NULL;
  if (block == 0) block = 32;
  if (block != 16 && block != 32 && block != 64 && block != 128 && block != 256)
    return lc_error(LC_ERR_INVALID_ARG, "q4 plan: block %d (16, 32, 64, 128 or 256; or --weights q4:fast)", block);
  lc_status s = lc_model_load(path, m);
  if (s) return s;
  if (lc_model_is_quantized(*m)) {
    p->quantized = 1;
    snprintf(p->summary, sizeof p->summary, "the file's own (quantized already)");
    return LC_OK;
  }
  const char *fast = getenv("LOWCONV_Q4_FAST");
  if (fast && *fast && strcmp(fast, "0")) {
    quick(p, "LOWCONV_Q4_FAST");
    return LC_OK;
  }
  entry *e = lc_calloc(1, sizeof *e);
  if (!e) return lc_error(LC_ERR_NO_MEMORY, "q4 plan: out of memory");
  int r = -1;
  if (entry_paths(path, block, e)) {
    fprintf(stderr, "lowconv: warning: no cache directory for the q4 plan (LOWCONV_CACHE_DIR, XDG_CACHE_HOME or "
            "HOME); the quick rule is used\n");
    quick(p, "no cache directory");
  } else if ((r = read_entry(e, p)) == 1) {
    p->from_cache = 1;
  } else if (noted_failure(e)) {
    fprintf(stderr, "lowconv: warning: no q4 plan for %s (it failed before: %s); the quick rule is used\n", path,
            e->none);
    quick(p, "no plan could be made before");
    r = -1;
  } else {
    int fd = lc_file_lock(e->lock);
    if (r == 0 && read_entry(e, p) == 1) /* another process made it while we waited */
      p->from_cache = 1, r = 1;
    else
      r = make_entry(path, e, block, p) ? -1 : 1;
    if (r == 1)
      remove(e->none);
    else
      note_failure(e);
    if (fd >= 0) lc_file_unlock(fd);
    if (r != 1) quick(p, "no plan could be made");
  }
  lc_free(e);
  if (r != 1) return LC_OK;
  lc_model *cal = NULL;
  if (lc_model_load(p->path, &cal)) {
    fprintf(stderr, "lowconv: warning: calibrated file %s: %s; the quick rule is used\n", p->path, lc_last_error());
    quick(p, "the calibrated file did not load");
    return LC_OK;
  }
  lc_model_free(*m);
  *m = cal;
  p->used = 1;
  return LC_OK;
}
