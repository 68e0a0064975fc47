#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "unit.h"

static const char *vars[] = {"HOROVOD_RANK",
                             "HOROVOD_SIZE",
                             "HOROVOD_LOCAL_RANK",
                             "HOROVOD_LOCAL_SIZE",
                             "HOROVOD_CROSS_RANK",
                             "HOROVOD_CROSS_SIZE",
                             "RANK",
                             "WORLD_SIZE",
                             "LOCAL_RANK",
                             "LOCAL_WORLD_SIZE",
                             "GROUP_RANK",
                             "GROUP_WORLD_SIZE"};

static void
clear(void)
{
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
}

START_TEST(horovod_identity)
{
    coll_comm *c;

    clear();
    setenv("HOROVOD_RANK", "2", 1);
    setenv("HOROVOD_SIZE", "3", 1);
    setenv("HOROVOD_LOCAL_RANK", "1", 1);
    setenv("HOROVOD_LOCAL_SIZE", "2", 1);
    setenv("HOROVOD_CROSS_RANK", "0", 1);
    setenv("HOROVOD_CROSS_SIZE", "1", 1);
    /* a valid identity, but no rendezvous to join: a clear error (the
     * identity itself is checked through hvdrun in integration tests) */
    unsetenv("HOROVOD_GLOO_RENDEZVOUS_ADDR");
    ck_assert_int_eq(coll_init(&c), COLL_ERENDEZVOUS);
    ck_assert_ptr_nonnull(
        strstr(coll_last_error(NULL), "start the job with hvdrun"));
}
END_TEST

START_TEST(torchrun_identity_of_one)
{
    coll_comm *c;

    clear();
    setenv("RANK", "0", 1);
    setenv("WORLD_SIZE", "1", 1);
    ck_assert_int_eq(coll_init(&c), 0);
    ck_assert_int_eq(coll_rank(c), 0);
    ck_assert_int_eq(coll_local_size(c), 1);
    ck_assert_int_eq(coll_cross_size(c), 1);
    coll_finalize(c);
}
END_TEST

START_TEST(no_launcher_is_a_job_of_one)
{
    coll_comm *c;

    clear();
    ck_assert_int_eq(coll_init(&c), 0);
    ck_assert_int_eq(coll_rank(c), 0);
    ck_assert_int_eq(coll_size(c), 1);
    coll_finalize(c);
    ck_assert_int_eq(coll_finalize(NULL), 0);
    ck_assert_int_eq(coll_rank(NULL), -1);
}
END_TEST

START_TEST(bad_identity)
{
    coll_comm *c = (coll_comm *)1;

    clear();
    setenv("HOROVOD_RANK", "5", 1);
    setenv("HOROVOD_SIZE", "2", 1);
    ck_assert_int_eq(coll_init(&c), COLL_EIDENTITY);
    ck_assert_ptr_null(c);
    ck_assert_ptr_nonnull(strstr(coll_last_error(NULL), "rank 5 of 2"));
    setenv("HOROVOD_RANK", "x", 1);
    ck_assert_int_eq(coll_init(&c), COLL_EIDENTITY);
    ck_assert_str_eq(coll_last_error(NULL),
                     "HOROVOD_RANK='x' is not a number >= 0");
    ck_assert_str_eq(coll_strerror(COLL_EIDENTITY),
                     "bad job identity in the environment");
    ck_assert_int_eq(coll_init(NULL), COLL_EINVAL);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("collective_identity");
    TCase *tc = tcase_create("init");

    ADD(tc, horovod_identity);
    ADD(tc, torchrun_identity_of_one);
    ADD(tc, no_launcher_is_a_job_of_one);
    ADD(tc, bad_identity);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
