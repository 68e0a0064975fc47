#include <string.h>

#include "kvstore.h"
#include "unit.h"

static kvstore kv;

static void
setup(void)
{
    hvdd_kv_init(&kv);
}

static void
teardown(void)
{
    hvdd_kv_release(&kv);
}

START_TEST(put_get_replace)
{
    const kv_value *v;

    ck_assert_int_eq(hvdd_kv_put(&kv, "global", "rank_0", "abc", 3, KV_JOB),
                     KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "global", "rank_0", "hello", 5, KV_JOB),
                     KV_OK);
    v = hvdd_kv_get(&kv, "global", "rank_0");
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(v->len, 5);
    ck_assert(memcmp(v->data, "hello", 5) == 0);
    ck_assert_uint_eq(kv.nkeys, 1);
    ck_assert_uint_eq(kv.nbytes, 5);
    ck_assert_ptr_null(hvdd_kv_get(&kv, "global", "rank_1"));
    ck_assert_ptr_null(hvdd_kv_get(&kv, "local_a", "rank_0"));
}
END_TEST

/* Horovod: in a sized scope the last member's DELETE of the key it put
 * (its rank, as Gloo names it) clears the scope. */
START_TEST(finalising_delete_clears_scope)
{
    ck_assert_int_eq(hvdd_kv_set_scope_size(&kv, "local_a", 2), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "local_a", "0", "x", 1, KV_OPEN), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "local_a", "1", "y", 1, KV_OPEN), KV_OK);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "local_a", "0"), 0);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "local_a", "0"), 0); /* counts once */
    ck_assert_ptr_nonnull(hvdd_kv_get(&kv, "local_a", "0"));
    ck_assert_int_eq(hvdd_kv_delete(&kv, "local_a", "1"), 1);
    ck_assert_ptr_null(hvdd_kv_get(&kv, "local_a", "0"));
    ck_assert_uint_eq(kv.nkeys, 0);
    ck_assert_uint_eq(kv.nbytes, 0);
    ck_assert_uint_eq(kv.open_keys, 0);
    ck_assert_uint_eq(kv.open_bytes, 0);
    /* the scope can be used again, for the next rendezvous */
    ck_assert_int_eq(hvdd_kv_put(&kv, "local_a", "0", "z", 1, KV_OPEN), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "local_a", "1", "z", 1, KV_OPEN), KV_OK);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "local_a", "0"), 0);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "local_a", "1"), 1);
}
END_TEST

/* A DELETE of a key nobody put does not count towards the end. */
START_TEST(made_up_deletes_count_for_nothing)
{
    ck_assert_int_eq(hvdd_kv_set_scope_size(&kv, "global", 2), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "global", "0", "x", 1, KV_OPEN), KV_OK);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "global", "7"), KV_ENOKEY);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "global", "1"), KV_ENOKEY);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "global", "0"), 0);
    ck_assert_ptr_nonnull(hvdd_kv_get(&kv, "global", "0"));
}
END_TEST

/* Writes without the token have a budget of their own. */
/* only a member's key (its rank) counts: a key no member puts, put and
 * DELETEd, is removed and finalised the scope before rank 1 was done */
START_TEST(other_keys_in_a_sized_scope_do_not_count)
{
    ck_assert_int_eq(hvdd_kv_set_scope_size(&kv, "global", 2), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "global", "0", "x", 1, KV_OPEN), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "global", "1", "y", 1, KV_OPEN), KV_OK);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "global", "0"), 0);
    ck_assert_int_eq(hvdd_kv_put(&kv, "global", "zzz", "z", 1, KV_OPEN), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "global", "01", "z", 1, KV_OPEN), KV_OK);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "global", "zzz"), 0);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "global", "01"), 0);
    ck_assert_ptr_null(hvdd_kv_get(&kv, "global", "zzz"));
    ck_assert_ptr_nonnull(hvdd_kv_get(&kv, "global", "1"));
    ck_assert_int_eq(hvdd_kv_delete(&kv, "global", "1"), 1);
    ck_assert_ptr_null(hvdd_kv_get(&kv, "global", "1"));
}
END_TEST

START_TEST(open_budget)
{
    static char big[KV_MAX_VALUE];
    int i, r = KV_OK;

    for (i = 0; r == KV_OK; i++) {
        char k[16];
        snprintf(k, sizeof(k), "o%d", i);
        r = hvdd_kv_put(&kv, "global", k, big, sizeof(big), KV_OPEN);
    }
    ck_assert_int_eq(r, KV_EOPENFULL);
    ck_assert_uint_eq(kv.open_bytes, KV_OPEN_BYTES);
    ck_assert_int_eq(hvdd_kv_put(&kv, "ring", "k", big, sizeof(big), KV_JOB),
                     KV_OK);
    /* a value counts in the budget of its last writer */
    ck_assert_int_eq(hvdd_kv_put(&kv, "global", "o0", "", 0, KV_OPEN), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "global", "o1", big, 10, KV_JOB), KV_OK);
    ck_assert_uint_eq(kv.open_bytes, KV_OPEN_BYTES - 2 * sizeof(big));
}
END_TEST

START_TEST(adhoc_scope_delete_removes_key)
{
    ck_assert_int_eq(hvdd_kv_put(&kv, "mine", "k", "v", 1, KV_JOB), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "mine", "j", "w", 1, KV_JOB), KV_OK);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "mine", "k"), 0);
    ck_assert_ptr_null(hvdd_kv_get(&kv, "mine", "k"));
    ck_assert_ptr_nonnull(hvdd_kv_get(&kv, "mine", "j"));
    ck_assert_int_eq(hvdd_kv_delete(&kv, "mine", "j"), 0);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "nowhere", "j"), 0);
    ck_assert_uint_eq(kv.nkeys, 0);
}
END_TEST

START_TEST(limits)
{
    static char big[KV_MAX_VALUE + 1];
    char key[KV_MAX_KEY + 1];

    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "k", big, KV_MAX_VALUE + 1, KV_JOB),
                     KV_ETOOBIG);
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "k", big, KV_MAX_VALUE, KV_JOB),
                     KV_OK);
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", key, "v", 1, KV_JOB), KV_EBADNAME);
    ck_assert_int_eq(hvdd_kv_put(&kv, "", "k", "v", 1, KV_JOB), KV_EBADNAME);
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "a b", "v", 1, KV_JOB), KV_EBADNAME);
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "a/b", "v", 1, KV_JOB), KV_EBADNAME);
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "\x01", "v", 1, KV_JOB),
                     KV_EBADNAME);
    for (int i = 0; i < 255; i++) {
        char k[16];
        snprintf(k, sizeof(k), "big%d", i);
        ck_assert_int_eq(hvdd_kv_put(&kv, "s", k, big, KV_MAX_VALUE, KV_JOB),
                         KV_OK);
    }
    ck_assert_int_eq(
        hvdd_kv_put(&kv, "s", "one-more", big, KV_MAX_VALUE, KV_JOB), KV_EFULL);
    ck_assert_str_eq(hvdd_kv_strerror(KV_EFULL),
                     "the store is full (262144 keys or 256 MiB)");
}
END_TEST

START_TEST(key_count_limit)
{
    char k[32];
    int i;

    for (i = 0; i < KV_MAX_KEYS; i++) {
        snprintf(k, sizeof(k), "%d", i);
        ck_assert_int_eq(hvdd_kv_put(&kv, "s", k, "", 0, KV_JOB), KV_OK);
    }
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "x", "", 0, KV_JOB), KV_EFULL);
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "0", "again", 5, KV_JOB),
                     KV_OK); /* replace */
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("kvstore");
    TCase *tc = tcase_create("store");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    ADD(tc, put_get_replace);
    ADD(tc, finalising_delete_clears_scope);
    ADD(tc, made_up_deletes_count_for_nothing);
    ADD(tc, other_keys_in_a_sized_scope_do_not_count);
    ADD(tc, open_budget);
    ADD(tc, adhoc_scope_delete_removes_key);
    ADD(tc, limits);
    ADD(tc, key_count_limit);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
