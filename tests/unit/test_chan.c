/* The launcher's channel to hvdd (hvdd_chan.h): frames taken whole however
 * they arrive, and refused when their header is not one; against a real
 * hvdd, answers to held requests come when released while later ones go
 * on, a waiting call keeps the others' answers for hvdd_chan_take (and
 * says so through hvdd_chan_pending), a 1 MiB value goes both ways, a
 * body over hvdd's limit is answered 413 and the channel goes on, a
 * request that is not one (extra words in its header included) ends the
 * channel, not hvdd, and hvdd refuses a --channel-fd that is no
 * socket. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
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
        struct pollfd p = {-1, 0, 0};
        p.fd = hvdd_chan_fd(ch, &p.events);
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
    {
        short ev;
        ck_assert_int_eq(hvdd_chan_fd(ch, &ev), -1); /* nothing to poll */
    }
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
        struct pollfd p = {-1, 0, 0};
        p.fd = hvdd_chan_fd(ch, &p.events);
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

/* hvdd's answer on a raw channel (no hvdd_chan), up to 5 s: its header
 * line, or "" when the channel ended. */
static void
raw_answer(int fd, char *line, size_t size)
{
    size_t n = 0;

    line[0] = '\0';
    while (n + 1 < size) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0 || read(fd, line + n, 1) != 1)
            break;
        if (line[n++] == '\n')
            break;
    }
    line[n] = '\0';
}

START_TEST(a_body_over_the_limit_is_refused_and_the_channel_goes_on)
{
    hvdd_fixture f;
    size_t big = HVDD_CHAN_MAX_BODY + 10;
    char *body = calloc(1, big), head[64], line[64];
    int n;

    ck_assert_ptr_nonnull(body);
    hvdd_fixture_start(&f);
    n = snprintf(head, sizeof(head), "5 PUT 0 9 %zu\n/hvdrun/k", big);
    ck_assert_int_eq(write(f.chan, head, (size_t)n), n);
    for (size_t at = 0; at < big;) {
        ssize_t w = write(f.chan, body + at, big - at);
        ck_assert_int_gt(w, 0);
        at += (size_t)w;
    }
    raw_answer(f.chan, line, sizeof(line));
    ck_assert_str_eq(line, "5 413 23\n");
    raw_answer(f.chan, line, sizeof(line)); /* its body's line */
    ck_assert_int_eq(write(f.chan, "6 GET 0 9 0\n/hvdrun/k", 21), 21);
    raw_answer(f.chan, line, sizeof(line));
    ck_assert_int_eq(strncmp(line, "6 404 ", 6), 0);
    free(body);
    close(f.chan);
    hvdd_fixture_stop(&f);
}
END_TEST

/* A header hvdd must refuse whole: the channel ends, hvdd serves on. */
static void
ends_the_channel(const char *bytes, size_t len)
{
    hvdd_fixture f;
    char line[64];

    hvdd_fixture_start(&f);
    ck_assert_int_eq(write(f.chan, bytes, len), (ssize_t)len);
    raw_answer(f.chan, line, sizeof(line));
    ck_assert_str_eq(line, ""); /* no answer: the end */
    ck_assert_int_eq(kill(f.pid, 0), 0);
    close(f.chan);
    hvdd_fixture_stop(&f);
}

START_TEST(headers_that_are_not_one_end_the_channel_not_hvdd)
{
    /* extra words: hvdd once took the lengths from the first five words
     * and read past its buffer */
    ends_the_channel("1 PUT 0 2048 1048576 0 0\n", 25);
    ends_the_channel("7 PUT 0 12 40 0 0\n/hvdrun/leak", 30);
    ends_the_channel("1 GET x 2 0\n/x", 14);
    ends_the_channel("1 FETCH 0 2 0\n/x", 16);
    ends_the_channel("-1 GET 0 2 0\n/x", 15);
}
END_TEST

START_TEST(a_channel_fd_that_is_no_socket_is_refused)
{
    int out[2], in[2], status;
    char buf[512] = {0};
    ssize_t n;
    pid_t pid;

    ck_assert_int_eq(pipe(out), 0);
    ck_assert_int_eq(pipe(in), 0);
    ck_assert_int_eq(
        write(in[1], HVDD_FIXTURE_TOKEN "\n", strlen(HVDD_FIXTURE_TOKEN) + 1),
        strlen(HVDD_FIXTURE_TOKEN) + 1);
    close(in[1]);
    if ((pid = fork()) == 0) {
        int null = open("/dev/null", O_RDONLY);
        dup2(in[0], 0);
        dup2(out[1], 2);
        dup2(null, 9); /* a descriptor, but a file */
        execl(HVD_BIN_DIR "/hvdd", "hvdd", "--size", "1", "--listen",
              "127.0.0.1:0", "--token-stdin", "--channel-fd", "9",
              (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    close(in[0]);
    for (size_t at = 0; at + 1 < sizeof(buf); at += (size_t)n) /* to EOF */
        if ((n = read(out[0], buf + at, sizeof(buf) - 1 - at)) <= 0) {
            n = (ssize_t)at;
            break;
        }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    ck_assert_int_gt(n, 0);
    ck_assert_msg(strstr(buf, "not a stream socket"), "said: %s", buf);
    close(out[0]);
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
        struct pollfd p = {-1, 0, 0};
        p.fd = hvdd_chan_fd(ch, &p.events);
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
    ADD(tc, a_body_over_the_limit_is_refused_and_the_channel_goes_on);
    ADD(tc, headers_that_are_not_one_end_the_channel_not_hvdd);
    ADD(tc, a_channel_fd_that_is_no_socket_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
