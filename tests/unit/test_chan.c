/* The launcher's channel to hvdd (hvdd_chan.h): frames taken whole however
 * they arrive, and refused when their header is not one; against a real
 * hvdd, answers to held requests come when released while later ones go
 * on, a waiting call keeps the others' answers for hvdd_chan_take (and
 * says so through hvdd_chan_pending), a 1 MiB value goes both ways, and a
 * request that is not one ends the channel, not hvdd. */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hvdd_chan.h"
#include "hvdd_fixture.h"
#include "unit.h"

/* The next answer on ch, waited for up to 10 s. */
static hvdd_chan_answer
next(hvdd_chan *ch)
{
    hvdd_chan_answer a = {0};
    int n = 0;

    for (int i = 0; i < 100 && (n = hvdd_chan_take(ch, &a)) == 0; i++) {
        struct pollfd p = {hvdd_chan_fd(ch), POLLIN, 0};
        poll(&p, 1, 100);
    }
    ck_assert_int_eq(n, 1);
    return a;
}

START_TEST(frames_are_taken_whole_however_they_come)
{
    int sv[2];
    hvdd_chan *ch;
    hvdd_chan_answer a;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_ptr_nonnull(ch = hvdd_chan_new(sv[0]));
    /* one answer in three pieces, then two in one write */
    ck_assert_int_eq(write(sv[1], "7 20", 4), 4);
    ck_assert_int_eq(hvdd_chan_take(ch, &a), 0);
    ck_assert_int_eq(write(sv[1], "0 5\nhel", 7), 7);
    ck_assert_int_eq(hvdd_chan_take(ch, &a), 0);
    ck_assert_int_eq(write(sv[1], "lo", 2), 2);
    a = next(ch);
    ck_assert_uint_eq(a.id, 7);
    ck_assert_int_eq(a.status, 200);
    ck_assert_str_eq(a.body, "hello");
    free(a.body);
    ck_assert_int_eq(write(sv[1], "8 404 0\n9 200 2\nok", 18), 18);
    ck_assert_int_eq(hvdd_chan_pending(ch), 0); /* not read yet */
    a = next(ch);
    ck_assert_uint_eq(a.id, 8);
    ck_assert_int_eq(a.status, 404);
    free(a.body);
    ck_assert_int_eq(hvdd_chan_pending(ch), 1); /* read with the first */
    a = next(ch);
    ck_assert_uint_eq(a.id, 9);
    free(a.body);
    /* a header that is not one: the channel is done */
    ck_assert_int_eq(write(sv[1], "10 200 x\n", 9), 9);
    {
        struct pollfd p = {sv[0], POLLIN, 0};
        poll(&p, 1, 1000);
    }
    ck_assert_int_eq(hvdd_chan_take(ch, &a), -1);
    ck_assert_int_eq(hvdd_chan_send(ch, 11, "GET", "/x", 0, NULL, 0),
                     HVDD_ECONNECT);
    hvdd_chan_free(ch);
    close(sv[1]);
}
END_TEST

START_TEST(held_requests_answer_when_released_and_calls_keep_the_rest)
{
    hvdd_fixture f;
    hvdd_chan *ch;
    hvdd_chan_answer a, b;

    hvdd_fixture_start(&f);
    ck_assert_ptr_nonnull(ch = hvdd_chan_new(f.chan));
    /* held until k exists */
    ck_assert_int_eq(hvdd_chan_send(ch, 1, "GET", "/hvdrun/k", 20000, NULL, 0),
                     0);
    ck_assert_int_eq(hvdd_chan_send(ch, 2, "GET", "/hvdrun/none", 0, NULL, 0),
                     0);
    a = next(ch);
    ck_assert_uint_eq(a.id, 2);
    ck_assert_int_eq(a.status, 404);
    free(a.body);
    /* the put's own call waits; the held get's answer, released by it,
     * is kept for take */
    ck_assert_int_eq(
        hvdd_chan_call(ch, "PUT", "/hvdrun/k", 0, "v1", 2, 5000, &b), 0);
    ck_assert_int_eq(b.status, 200);
    free(b.body);
    for (int i = 0; i < 50 && !hvdd_chan_pending(ch); i++) {
        struct pollfd p = {hvdd_chan_fd(ch), POLLIN, 0};
        poll(&p, 1, 100);
        if (hvdd_chan_take(ch, &a) == 1) { /* came after the call */
            ck_assert_uint_eq(a.id, 1);
            goto got;
        }
    }
    ck_assert_int_eq(hvdd_chan_pending(ch), 1);
    a = next(ch);
    ck_assert_uint_eq(a.id, 1);
got:
    ck_assert_int_eq(a.status, 200);
    ck_assert_str_eq(a.body, "v1");
    free(a.body);
    hvdd_chan_free(ch);
    hvdd_fixture_stop(&f);
}
END_TEST

START_TEST(a_mebibyte_goes_both_ways)
{
    hvdd_fixture f;
    hvdd_chan *ch;
    hvdd_chan_answer a;
    size_t n = 1u << 20;
    char *big = malloc(n);

    ck_assert_ptr_nonnull(big);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + i % 26);
    hvdd_fixture_start(&f);
    ck_assert_ptr_nonnull(ch = hvdd_chan_new(f.chan));
    ck_assert_int_eq(
        hvdd_chan_call(ch, "PUT", "/hvdrun/big", 0, big, n, 5000, &a), 0);
    ck_assert_int_eq(a.status, 200);
    free(a.body);
    ck_assert_int_eq(
        hvdd_chan_call(ch, "GET", "/hvdrun/big", 0, NULL, 0, 5000, &a), 0);
    ck_assert_int_eq(a.status, 200);
    ck_assert_uint_eq(a.len, n);
    ck_assert_int_eq(memcmp(a.body, big, n), 0);
    free(a.body);
    free(big);
    hvdd_chan_free(ch);
    hvdd_fixture_stop(&f);
}
END_TEST

START_TEST(a_request_that_is_not_one_ends_the_channel_not_hvdd)
{
    hvdd_fixture f;
    hvdd_chan *ch;
    hvdd_chan_answer a;
    int n = 0;

    hvdd_fixture_start(&f);
    ck_assert_int_eq(write(f.chan, "1 GET x 2 0\n/x", 14), 14);
    ck_assert_ptr_nonnull(ch = hvdd_chan_new(f.chan));
    for (int i = 0; i < 50 && (n = hvdd_chan_take(ch, &a)) == 0; i++) {
        struct pollfd p = {hvdd_chan_fd(ch), POLLIN, 0};
        poll(&p, 1, 100);
    }
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(kill(f.pid, 0), 0); /* still serving */
    hvdd_chan_free(ch);
    hvdd_fixture_stop(&f);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("chan");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    ADD(tc, frames_are_taken_whole_however_they_come);
    ADD(tc, held_requests_answer_when_released_and_calls_keep_the_rest);
    ADD(tc, a_mebibyte_goes_both_ways);
    ADD(tc, a_request_that_is_not_one_ends_the_channel_not_hvdd);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
