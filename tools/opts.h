/* One option-table mechanism for every subcommand: the table parses the arguments and prints the
 * --help text, so what is documented is what is accepted. */
#ifndef LC_TOOLS_OPTS_H
#define LC_TOOLS_OPTS_H

#include <stddef.h>
#include <stdio.h>

#define OPT_LIST_MAX 64

typedef enum opt_kind {
  OPT_FLAG,   /* int set to 1 */
  OPT_INT,    /* int in [lo, hi] */
  OPT_BYTES,  /* size_t, suffix K/M/G (binary; KiB/KB accepted) */
  OPT_DOUBLE, /* double >= lo */
  OPT_CHOICE, /* int = index of the value in choices */
  OPT_STRING, /* const char * */
  OPT_LIST    /* opt_list: the option may repeat */
} opt_kind;

typedef struct opt_list {
  const char *v[OPT_LIST_MAX];
  int n;
} opt_list;

typedef struct opt_def {
  const char *name;            /* "--threads" */
  const char *arg;             /* value placeholder in the help ("T"); NULL for flags */
  opt_kind kind;
  size_t off;                  /* offsetof the field in the command's options struct */
  long long lo, hi;            /* OPT_INT range; OPT_DOUBLE lower bound (lo) */
  const char *const *choices;  /* OPT_CHOICE: NULL-terminated */
  const char *help;            /* lines separated by '\n'; the default is appended from the struct */
} opt_def;

typedef struct opt_cmd {
  const char *name;            /* "conv" */
  const char *usage;           /* what follows "lowconv NAME", one or more lines */
  const char *about;           /* paragraph before the options (may be NULL) */
  const opt_def *opts;
  int n_opts;
  const char *epilog;          /* after the options (may be NULL) */
  int max_pos;                 /* positional arguments accepted */
  const char *pos_name;        /* "model", "descriptor": for "more than one ..." */
} opt_cmd;

/* Parses argv[1..] into *out (already holding the defaults) and positionals into pos[max_pos].
 * Returns 0, 2 after printing a usage error, or -1 after printing the help (exit 0). */
int opts_parse(const opt_cmd *c, int argc, char **argv, void *out, const char **pos, int *npos);
/* The help: usage, about, one entry per option with its choices and default (from dflt). */
void opts_help(const opt_cmd *c, const void *dflt, FILE *f);
/* "lowconv CMD: message" + a pointer to --help on stderr; returns 2. */
int opts_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int opts_parse_bytes(const char *s, size_t *out);

/* --device (only "cpu" is built): 0, or 2 after the message. (--threads past the online cores:
 * the library's thread pool warns, once per process.) */
int opts_device(const char *cmd, const char *device);
int opts_online_cores(void);
/* mkdir -p; 0 or -1 with errno. */
int opts_mkdirs(const char *path);

extern const char *const opts_tune_levels[];
extern const char *const opts_weight_formats[];

#endif
