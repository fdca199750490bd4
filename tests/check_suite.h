/* Running one Check suite as a test program's main does: its exit code (0 when every test
 * passed). Shared by the test programs (test_run.h adds the solver tests' GPU helpers). */
#ifndef CS_CHECK_SUITE_H
#define CS_CHECK_SUITE_H

#include <check.h>

static inline int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif
