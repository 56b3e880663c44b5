/* Backing storage of a loaded model (onnx_map.c): the mapped model file, mapped external data
 * (only regular files that resolve inside the model's directory), and copies of misaligned
 * tensors made when first needed. The decoder (onnx_pb.c) sees only these calls. */
#define _DEFAULT_SOURCE /* madvise, realpath */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/onnx_map.h"
#include "util/alloc.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/parallel.h"

struct lc_onnx_mapping {
  lc_onnx_mapping *next;
  void *addr;
  size_t len;
  int heap;        /* 1: an lc_malloc copy of misaligned raw_data, 0: an mmap of external data */
  const void *src; /* heap: bytes not copied yet (lc_onnx_ensure copies them), else NULL */
};

static void drop_pages(const void *p, size_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  uintptr_t a = ((uintptr_t)p + page - 1) / page * page, e = ((uintptr_t)p + n) / page * page;
  /* Private file pages not written since mapping: dropping them only discards cached copies of
   * the file, and a later read would fault the same bytes back in. */
  if (e > a) (void)madvise((void *)a, e - a, MADV_DONTNEED);
}

static int in_file_map(const lc_onnx_model *m, uintptr_t a, size_t n) {
  return m->file_map && !m->file_owned && a >= (uintptr_t)m->file_map && n <= m->file_len &&
         a - (uintptr_t)m->file_map <= m->file_len - n;
}

/* Copy of misaligned tensor bytes. Small ones are copied into the arena now. Large ones get their
 * own block, filled only when first needed (lc_onnx_ensure: most are conv weights read once at
 * packing), so the copies never all exist at once; lc_onnx_release frees them. */
void *lc_onnx_copy_bytes(lc_onnx_model *m, const void *src, size_t n) {
  if (n < 4096) {
    void *c = lc_arena_alloc(&m->arena, n);
    if (c) memcpy(c, src, n);
    return c;
  }
  lc_onnx_mapping *mp = lc_arena_alloc(&m->arena, sizeof(*mp));
  void *c = mp ? lc_malloc(n) : NULL;
  if (!c) return NULL;
  mp->addr = c;
  mp->len = n;
  mp->heap = 1;
  mp->src = src;
  mp->next = m->maps;
  m->maps = mp;
  return c;
}

static lc_onnx_mapping *heap_copy(const lc_onnx_model *m, const void *p) {
  for (lc_onnx_mapping *mp = m->maps; mp; mp = mp->next)
    if (mp->heap && mp->addr == p) return mp;
  return NULL;
}

typedef struct copy_job {
  const lc_onnx_mapping *mp;
  int mapped;
} copy_job;

#define COPY_STEP ((size_t)1 << 20)

static int copy_steps(void *arg, size_t s0, size_t s1) {
  const copy_job *j = arg;
  for (size_t st = s0; st < s1; st++) {
    size_t off = st * COPY_STEP, n = j->mp->len - off < COPY_STEP ? j->mp->len - off : COPY_STEP;
    memcpy((char *)j->mp->addr + off, (const char *)j->mp->src + off, n);
    if (j->mapped) drop_pages((const char *)j->mp->src + off, n);
  }
  return 0;
}

void lc_onnx_ensure(lc_onnx_model *m, const void *p) {
  lc_onnx_mapping *mp = m && p ? heap_copy(m, p) : NULL;
  if (!mp || !mp->src) return;
  /* In 1 MiB steps, dropping the file's pages behind the copy: never both copies resident. On a
   * few threads: page faults on both sides bound it (IResNet-34: 35 ms of a 0.4 s start). */
  copy_job j = {mp, in_file_map(m, (uintptr_t)mp->src, mp->len)};
  lc_parallel_ranges(lc_div_up(mp->len, COPY_STEP), 8, 8, copy_steps, &j);
  mp->src = NULL;
}

const void *lc_onnx_source(const lc_onnx_model *m, const void *p) {
  const lc_onnx_mapping *mp = m && p ? heap_copy(m, p) : NULL;
  return mp ? mp->src : NULL;
}

/* The mapping of external data holding [a, a + n), or NULL. */
static const lc_onnx_mapping *external_map(const lc_onnx_model *m, uintptr_t a, size_t n) {
  for (const lc_onnx_mapping *mp = m->maps; mp; mp = mp->next)
    if (!mp->heap && a >= (uintptr_t)mp->addr && n <= mp->len && a - (uintptr_t)mp->addr <= mp->len - n) return mp;
  return NULL;
}

void lc_onnx_release(lc_onnx_model *m, const void *p, size_t n) {
  if (!m || !p || !n) return;
  uintptr_t a = (uintptr_t)p;
  if (in_file_map(m, a, n)) {
    drop_pages(p, n);
    return;
  }
  lc_onnx_mapping *hc = heap_copy(m, p);
  if (hc) { /* never filled: its source was read in place (lc_onnx_source), drop those pages */
    if (hc->src && in_file_map(m, (uintptr_t)hc->src, hc->len)) drop_pages(hc->src, hc->len);
    lc_free(hc->addr);
    hc->addr = NULL;
    hc->src = NULL;
    return;
  }
  if (external_map(m, a, n)) drop_pages(p, n);
}

size_t lc_onnx_readable_after(const lc_onnx_model *m, const void *p, size_t n) {
  if (!m || !p) return 0;
  uintptr_t a = (uintptr_t)p, base = 0;
  size_t len = 0, page = (size_t)sysconf(_SC_PAGESIZE);
  if (in_file_map(m, a, n)) {
    base = (uintptr_t)m->file_map, len = m->file_len;
  } else {
    const lc_onnx_mapping *mp = external_map(m, a, n);
    if (!mp) return 0;
    base = (uintptr_t)mp->addr, len = mp->len;
  }
  /* a mapping covers whole pages: the rest of its last page reads as the file (or zeros past EOF) */
  return (len + page - 1) / page * page - (a + n - base);
}

static int safe_location(const char *loc) {
  if (!loc[0] || loc[0] == '/') return 0;
  for (const char *p = loc; *p; p++) {
    if (p[0] == '.' && p[1] == '.' && (p == loc || p[-1] == '/') && (p[2] == '/' || p[2] == 0)) return 0;
  }
  return 1;
}

/* Opens path for reading if it is a regular file: O_NONBLOCK so a FIFO cannot block the open,
 * O_CLOEXEC so the descriptor never leaks into a child. -1 with *why set otherwise. */
static int open_regular(const char *path, int nofollow, struct stat *st, const char **why) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
  *why = "cannot be opened";
  if (fd < 0) return -1;
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    *why = "is not a regular file";
    close(fd);
    return -1;
  }
  return fd;
}

/* dir is the model's directory as realpath gave it. The location must name, after every symlink
 * is followed, a regular file inside dir: a link to /etc/passwd would turn its bytes into weights
 * (and maybe outputs). The checked real path is what gets opened, with O_NOFOLLOW. */
lc_status lc_onnx_map_external(lc_onnx_model *m, const char *dir, lc_tensor *t, const char *loc, int64_t offset,
                               int64_t length) {
  if (!dir) return lc_error(LC_ERR_IO, "onnx: tensor '%s' uses external data, which needs a model path", t->name);
  if (!loc || !safe_location(loc))
    return lc_error(LC_ERR_IO, "onnx: tensor '%s': external data location '%s' must be a relative path inside the "
                    "model's directory", t->name, loc ? loc : "");
  if (offset < 0 || (length >= 0 && (uint64_t)length != t->nbytes))
    return lc_error(LC_ERR_IO, "onnx: tensor '%s': external data offset %lld / length %lld do not match %zu bytes",
                    t->name, (long long)offset, (long long)length, t->nbytes);
  size_t dl = strlen(dir), plen;
  if (!lc_add_sz(dl, strlen(loc) + 2, &plen)) return lc_error(LC_ERR_OVERFLOW, "onnx: path too long");
  char *path = lc_arena_alloc(&m->arena, plen);
  if (!path) return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
  snprintf(path, plen, "%s/%s", dir, loc);
  char *real = realpath(path, NULL);
  if (!real) return lc_error(LC_ERR_IO, "onnx: tensor '%s': cannot open external data '%s'", t->name, loc);
  size_t inside = dl == 1 ? 1 : dl + 1; /* dir "/" is its own separator */
  int ok = !strncmp(real, dir, dl) && (dl == 1 || real[dl] == '/') && strlen(real) > inside;
  struct stat st;
  const char *why = "resolves to a path outside the model's directory";
  int fd = ok ? open_regular(real, 1, &st, &why) : -1;
  free(real);
  if (fd < 0) return lc_error(LC_ERR_IO, "onnx: tensor '%s': external data '%s' %s", t->name, loc, why);
  size_t end;
  if (st.st_size < 0 || !lc_add_sz((size_t)offset, t->nbytes, &end) || end > (uint64_t)st.st_size) {
    close(fd);
    return lc_error(LC_ERR_IO, "onnx: tensor '%s': external data '%s' is shorter than offset %lld + %zu bytes",
                    t->name, loc, (long long)offset, t->nbytes);
  }
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  /* up to 256 bytes more when the file has them: kernels reading codes in place load past their end */
  size_t more = (uint64_t)st.st_size - end < 256 ? (size_t)((uint64_t)st.st_size - end) : 256;
  size_t start = (size_t)offset / page * page, mlen = end + more - start;
  void *a = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)start);
  close(fd);
  if (a == MAP_FAILED) return lc_error(LC_ERR_IO, "onnx: tensor '%s': cannot map external data '%s'", t->name, loc);
  lc_onnx_mapping *mp = lc_arena_alloc(&m->arena, sizeof(*mp));
  if (!mp) {
    munmap(a, mlen);
    return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
  }
  mp->addr = a;
  mp->len = mlen;
  mp->heap = 0;
  mp->next = m->maps;
  m->maps = mp;
  t->data = (char *)a + ((size_t)offset - start);
  size_t align = lc_dtype_size(t->dtype) ? lc_dtype_size(t->dtype) : 1; /* int4: bytes */
  if ((uintptr_t)t->data % align != 0) {
    void *c = lc_onnx_copy_bytes(m, t->data, t->nbytes);
    if (!c) return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
    t->data = c;
  }
  return LC_OK;
}

lc_status lc_onnx_map_file(const char *path, lc_onnx_model **out, const char **dir) {
  struct stat st;
  const char *why;
  int fd = open_regular(path, 0, &st, &why);
  if (fd < 0)
    return strcmp(why, "cannot be opened") ? lc_error(LC_ERR_IO, "onnx: '%s' is not a regular file", path)
                                           : lc_error(LC_ERR_IO, "onnx: cannot open '%s'", path);
  lc_onnx_model *m = lc_calloc(1, sizeof(*m));
  if (!m) {
    close(fd);
    return lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
  }
  m->file_len = (size_t)st.st_size;
  if (m->file_len) {
    /* Private writable mapping: tensors point into it, and a stray write never reaches the file. */
    m->file_map = mmap(NULL, m->file_len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (m->file_map == MAP_FAILED) {
      m->file_map = NULL;
      close(fd);
      lc_free(m);
      return lc_error(LC_ERR_IO, "onnx: cannot map '%s'", path);
    }
  }
  close(fd);
  /* The directory as realpath gives it: external data must resolve inside it. */
  const char *slash = strrchr(path, '/');
  char *d = lc_arena_strndup(&m->arena, slash ? path : ".", slash ? (size_t)(slash - path) : 1);
  char *real = d ? realpath(slash == path ? "/" : d, NULL) : NULL;
  *dir = real ? lc_arena_strndup(&m->arena, real, strlen(real)) : NULL;
  free(real);
  if (!*dir) {
    lc_onnx_free(m);
    return d ? lc_error(LC_ERR_IO, "onnx: cannot resolve the directory of '%s'", path)
             : lc_error(LC_ERR_NO_MEMORY, "onnx: out of memory");
  }
  *out = m;
  return LC_OK;
}

void lc_onnx_free(lc_onnx_model *m) {
  if (!m) return;
  for (lc_onnx_mapping *p = m->maps; p; p = p->next) {
    if (p->heap) lc_free(p->addr);
    else munmap(p->addr, p->len);
  }
  if (m->file_map) {
    if (m->file_owned) lc_free(m->file_map);
    else munmap(m->file_map, m->file_len);
  }
  lc_arena_free(&m->arena);
  lc_free(m);
}
