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

    ck_assert_int_eq(hvdd_kv_put(&kv, "global", "rank_0", "abc", 3), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "global", "rank_0", "hello", 5), KV_OK);
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

/* Horovod: in a sized scope the last member's DELETE clears it. */
START_TEST(finalising_delete_clears_scope)
{
    ck_assert_int_eq(hvdd_kv_set_scope_size(&kv, "local_a", 2), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "local_a", "rank_0", "x", 1), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "local_a", "rank_1", "y", 1), KV_OK);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "local_a", "0"), 0);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "local_a", "0"), 0); /* counts once */
    ck_assert_ptr_nonnull(hvdd_kv_get(&kv, "local_a", "rank_0"));
    ck_assert_int_eq(hvdd_kv_delete(&kv, "local_a", "1"), 1);
    ck_assert_ptr_null(hvdd_kv_get(&kv, "local_a", "rank_0"));
    ck_assert_uint_eq(kv.nkeys, 0);
    ck_assert_uint_eq(kv.nbytes, 0);
    /* the scope can be used again, for the next rendezvous */
    ck_assert_int_eq(hvdd_kv_put(&kv, "local_a", "rank_0", "z", 1), KV_OK);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "local_a", "0"), 0);
    ck_assert_int_eq(hvdd_kv_delete(&kv, "local_a", "1"), 1);
}
END_TEST

START_TEST(adhoc_scope_delete_removes_key)
{
    ck_assert_int_eq(hvdd_kv_put(&kv, "mine", "k", "v", 1), KV_OK);
    ck_assert_int_eq(hvdd_kv_put(&kv, "mine", "j", "w", 1), KV_OK);
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

    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "k", big, KV_MAX_VALUE + 1),
                     KV_ETOOBIG);
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "k", big, KV_MAX_VALUE), KV_OK);
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", key, "v", 1), KV_EBADNAME);
    ck_assert_int_eq(hvdd_kv_put(&kv, "", "k", "v", 1), KV_EBADNAME);
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "a b", "v", 1), KV_EBADNAME);
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "a/b", "v", 1), KV_EBADNAME);
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "\x01", "v", 1), KV_EBADNAME);
    for (int i = 0; i < 255; i++) {
        char k[16];
        snprintf(k, sizeof(k), "big%d", i);
        ck_assert_int_eq(hvdd_kv_put(&kv, "s", k, big, KV_MAX_VALUE), KV_OK);
    }
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "one-more", big, KV_MAX_VALUE),
                     KV_EFULL);
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
        ck_assert_int_eq(hvdd_kv_put(&kv, "s", k, "", 0), KV_OK);
    }
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "x", "", 0), KV_EFULL);
    ck_assert_int_eq(hvdd_kv_put(&kv, "s", "0", "again", 5),
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
    ADD(tc, adhoc_scope_delete_removes_key);
    ADD(tc, limits);
    ADD(tc, key_count_limit);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
