/* Shared main() for the Check suites: one binary per module. */
#ifndef HVD_UNIT_H
#define HVD_UNIT_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#define UNIT_MAIN(make_suite)                                                  \
    int main(void)                                                             \
    {                                                                          \
        SRunner *sr = srunner_create(make_suite());                            \
        int failed;                                                            \
        srunner_run_all(sr, CK_NORMAL);                                        \
        failed = srunner_ntests_failed(sr);                                    \
        srunner_free(sr);                                                      \
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                      \
    }

#define ADD(tc, fn) tcase_add_test(tc, fn)

#endif
