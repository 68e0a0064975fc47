/* Shared memory's copies into the caller's buffers: with streaming
 * stores (x86-64) every byte arrives whatever the alignments and the
 * length, and nothing beyond the destination is touched; the choice of
 * when to stream follows the transport's threshold. */
#include <string.h>

#include "shm.h"
#include "unit.h"

#define GUARD 0xa5
#define ROOM 5000

/* 1 when every byte of [from, to) is still the guard */
static int
untouched(const unsigned char *from, const unsigned char *to)
{
    while (from < to && *from == GUARD)
        from++;
    return from == to;
}

static void
check_copy(size_t dst_at, size_t src_at, size_t n, int stream)
{
    static unsigned char src[ROOM + 64], dst[ROOM + 64 + 2 * 64];
    unsigned char *d = dst + 64 + dst_at;

    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (unsigned char)(i * 7 + 1);
    memset(dst, GUARD, sizeof(dst));
    shm_store(d, src + src_at, n, stream);
    shm_store_done(stream);
    ck_assert_msg(memcmp(d, src + src_at, n) == 0,
                  "dst+%zu src+%zu %zu bytes, stream %d: wrong bytes", dst_at,
                  src_at, n, stream);
    ck_assert_msg(untouched(dst, d) && untouched(d + n, dst + sizeof(dst)),
                  "dst+%zu src+%zu %zu bytes, stream %d: a byte outside the "
                  "destination written",
                  dst_at, src_at, n, stream);
}

START_TEST(every_alignment_and_length_arrives_whole)
{
    static const size_t lengths[] = {0,  1,   15,  16,  17,   63,   64,
                                     65, 127, 128, 129, 1000, 4109, ROOM};

    for (size_t dst_at = 0; dst_at < 64; dst_at++)
        for (size_t src_at = 0; src_at < 8; src_at++)
            for (size_t i = 0; i < sizeof(lengths) / sizeof(*lengths); i++)
                for (int stream = 0; stream < 2; stream++)
                    check_copy(dst_at, src_at, lengths[i], stream);
}
END_TEST

START_TEST(streams_above_the_threshold_only)
{
    shm_transport t;

    memset(&t, 0, sizeof(t));
    t.spec.stream_above = 4096;
#if defined(__x86_64__)
    ck_assert_int_eq(shm_streams(&t, 4097), 1);
#else
    ck_assert_int_eq(shm_streams(&t, 4097), 0); /* ordinary stores only */
#endif
    ck_assert_int_eq(shm_streams(&t, 4096), 0);
    ck_assert_int_eq(shm_streams(&t, 0), 0);
    /* the default: the last level cache's size, never a small one */
    ck_assert_uint_ge(shm_last_level_cache(), 1u << 20);
}
END_TEST

static Suite *
shm_store_suite(void)
{
    Suite *s = suite_create("shm_store");
    TCase *tc = tcase_create("core");

    ADD(tc, every_alignment_and_length_arrives_whole);
    ADD(tc, streams_above_the_threshold_only);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(shm_store_suite)
