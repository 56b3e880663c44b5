/* The CLI's benchdnn descriptor parser: defaults, full forms, derived pads, invalid strings. */
#include <string.h>

#include "testutil.h"

/* The parser lives with the CLI (tools/); the test build only links the library. */
#include "benchdnn.h"

static bd_conv parse_ok(const char *s) {
  bd_conv c;
  char err[256];
  memset(&c, 0, sizeof c);
  int rc = bd_parse(s, &c, err, sizeof err);
  TU_CHECK(rc == 0, "'%s' should parse: %s", s, err);
  return c;
}

static void expect_fail(const char *s, const char *needle) {
  bd_conv c;
  char err[256];
  int rc = bd_parse(s, &c, err, sizeof err);
  TU_CHECK(rc == -1, "'%s' should fail", s);
  TU_CHECK(err[0] != '\0', "'%s' failed without a message", s);
  TU_CHECK(!needle || strstr(err, needle), "'%s': message '%s' lacks '%s'", s, err, needle);
}

#define EQ(x, v) TU_CHECK((x) == (v), "%s = %lld, want %lld", #x, (long long)(x), (long long)(v))

static void test_defaults(void) {
  bd_conv c = parse_ok("ic3ih5oc4kh3");
  EQ(c.mb, 1); EQ(c.g, 1); EQ(c.has_groups, 0); EQ(c.ic, 3); EQ(c.oc, 4);
  EQ(c.ih, 5); EQ(c.iw, 5); EQ(c.kh, 3); EQ(c.kw, 3); EQ(c.sh, 1); EQ(c.sw, 1);
  EQ(c.ph, 0); EQ(c.pw, 0); EQ(c.pb, 0); EQ(c.pr, 0); EQ(c.dh, 0); EQ(c.dw, 0);
  EQ(c.oh, 3); EQ(c.ow, 3);
  TU_CHECK(c.name[0] == '\0', "no name");

  /* no w value: every w value copies h */
  c = parse_ok("mb2ic3ih10oc4kh3sh2ph1dh1");
  EQ(c.mb, 2); EQ(c.iw, 10); EQ(c.kw, 3); EQ(c.sw, 2); EQ(c.pw, 1); EQ(c.dw, 1);
  EQ(c.oh, 4); EQ(c.ow, 4); /* extent 5: (10 + 2 - 5) / 2 + 1 */

  /* some w values: the rest take benchdnn's defaults; iw/kw fall back to ih/kh */
  c = parse_ok("ic3ih10iw20oc4kh3sh2");
  EQ(c.kw, 3); EQ(c.sw, 1); EQ(c.pw, 0); EQ(c.oh, 4); EQ(c.ow, 18);
  c = parse_ok("ic3ih10iw20oc4kh3kw5");
  EQ(c.oh, 8); EQ(c.ow, 16);

  /* 1-D along w */
  c = parse_ok("ic2iw10oc2kw3");
  EQ(c.ih, 1); EQ(c.kh, 1); EQ(c.oh, 1); EQ(c.ow, 8);

  /* dilation d1 = one hole: extent (3-1)*2+1 = 5 */
  c = parse_ok("ic2ih10oc2kh3dh1ph2");
  EQ(c.dh, 1); EQ(c.oh, 10);
}

static void test_full_forms(void) {
  bd_conv c = parse_ok("g1mb1ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3");
  EQ(c.has_groups, 1); EQ(c.oh, 112); EQ(c.ow, 112); EQ(c.ph, 3); EQ(c.pw, 3);
  EQ(c.pb, 2); EQ(c.pr, 2); /* benchdnn's right pad: (112-1)*2 - 224 + 7 - 3 */
  TU_CHECK(bd_flops(&c) == 2.0 * 64 * 112 * 112 * 3 * 49, "flops %g", bd_flops(&c));

  c = parse_ok("g1mb1_ic3ih224iw224_oc64oh112ow112_kh7kw7_sh2sw2_ph3pw3_n\"resnet18_0\"");
  EQ(c.oh, 112);
  TU_CHECK(!strcmp(c.name, "resnet18_0"), "name '%s'", c.name);

  c = parse_ok("mb1ic64ih56oc256oh56kh1ph0n\"resnet_50:res2a_branch1*4\"");
  EQ(c.oh, 56); EQ(c.kw, 1);
  TU_CHECK(!strcmp(c.name, "resnet_50:res2a_branch1*4"), "name '%s'", c.name);

  c = parse_ok("ic3ih8oc4kh3nfoo_bar"); /* unquoted: to the end, '_' included */
  TU_CHECK(!strcmp(c.name, "foo_bar"), "name '%s'", c.name);
  c = parse_ok("n\"resnet:conv1\"ic3ih8oc4kh3"); /* quoted name first */
  TU_CHECK(!strcmp(c.name, "resnet:conv1"), "name '%s'", c.name);
  EQ(c.oh, 6);

  c = parse_ok("g32mb1ic32ih112oc32kh3ph1"); /* depthwise */
  EQ(c.g, 32); EQ(c.oh, 112);
  c = parse_ok("mb1ic256ih80oc256kh9ph4");
  EQ(c.oh, 80); EQ(c.pb, 4);
}

static void test_derived_pads(void) {
  bd_conv c = parse_ok("ic4ih5oc4oh5kh3"); /* 'same' */
  EQ(c.ph, 1); EQ(c.pb, 1);
  c = parse_ok("ic4ih4oc4oh4kh2"); /* even kernel: the extra pad goes to the end */
  EQ(c.ph, 0); EQ(c.pb, 1);
  c = parse_ok("ic256ih56oc512oh28kh1sh2ph0"); /* stride skips the last row */
  EQ(c.ph, 0); EQ(c.pb, 0); EQ(c.oh, 28);
  c = parse_ok("ic8ih56oc8oh28kh1sh2");
  EQ(c.ph, 0); EQ(c.pb, 0);
  c = parse_ok("ic32ih112oc32oh56kh3sh2ph0"); /* TF-style 'same' with stride 2 */
  EQ(c.ph, 0); EQ(c.pb, 1);
}

static void test_invalid(void) {
  expect_fail("", "empty");
  expect_fail("ic3oc4", "spatial");
  expect_fail("ih5oc4kh3", "ic and oc");
  expect_fail("ic3ih5oc4kh3zz", "unexpected");
  expect_fail("ic3ih5oc4kh3ic4", "twice");
  expect_fail("ic3ih5oc4", "kh");
  expect_fail("ic3ih5oc4kh7", "extent");
  expect_fail("ic3ih10oc4kh3oh3ph0", "does not match");
  expect_fail("ic3ih10oc4kh3oh3", "too small");
  expect_fail("g3ic4ih5oc6kh3", "multiples");
  expect_fail("g0ic4ih5oc4kh3", "g must be");
  expect_fail("ic3ih5oc4kh3sh0", "sh must be");
  expect_fail("ic0ih5oc4kh3", "ic must be");
  expect_fail("ic3id5ih5oc4kh3", "3-D");
  expect_fail("ic3ih5oc4kh3kd3", "3-D");
  expect_fail("ic-3ih5oc4kh3", "number");
  expect_fail("ic3ih99999999999oc4kh3", "too large");
  expect_fail("ic3ih5oc4kh3n\"open", "unterminated");
  expect_fail("icih5oc4kh3", "number");
}

static int same(const bd_conv *a, const bd_conv *b) {
  const int64_t x[] = {a->g, a->mb, a->ic, a->ih, a->iw, a->oc, a->oh, a->ow, a->kh,
                       a->kw, a->sh, a->sw, a->ph, a->pw, a->pb, a->pr, a->dh, a->dw};
  const int64_t y[] = {b->g, b->mb, b->ic, b->ih, b->iw, b->oc, b->oh, b->ow, b->kh,
                       b->kw, b->sh, b->sw, b->ph, b->pw, b->pb, b->pr, b->dh, b->dw};
  return !memcmp(x, y, sizeof x) && !strcmp(a->name, b->name);
}

static void test_format_roundtrip(void) {
  const char *cases[] = {"ic3ih5oc4kh3", "g1mb1ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3",
                         "ic4ih4oc4oh4kh2", "ic3ih10iw20oc4kh3kw5sh2sw1dh1", "g32mb3ic32ih112oc32kh3ph1n\"dw\"",
                         "ic256ih56oc512oh28kh1sh2ph0"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bd_conv a = parse_ok(cases[i]), b;
    char buf[256], err[256];
    bd_format(&a, buf, sizeof buf);
    int rc = bd_parse(buf, &b, err, sizeof err);
    TU_CHECK(rc == 0, "format '%s' of '%s' does not parse: %s", buf, cases[i], err);
    if (rc) continue;
    TU_CHECK(same(&a, &b), "'%s' -> '%s' changed the problem", cases[i], buf);
  }
  bd_conv c = parse_ok("mb1ic256ih80oc256kh9ph4");
  char small[8];
  bd_format(&c, small, sizeof small); /* truncates, stays terminated */
  TU_CHECK(strlen(small) < sizeof small, "truncation");
}

int main(void) {
  test_defaults();
  test_full_forms();
  test_derived_pads();
  test_invalid();
  test_format_roundtrip();
  return tu_finish("test_benchdnn");
}
