#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "unit.h"

static out_sink sink;
static out_stream st;

static void
setup(void)
{
    out_sink_init(&sink, -1);
    out_stream_init(&st, 3, 0, 0, -1);
}

static void
teardown(void)
{
    out_stream_release(&st);
    free(sink.buf);
}

static void
feed(const char *s)
{
    out_stream_feed(&st, s, strlen(s), &sink);
}

static void
expect(const char *want)
{
    ck_assert_uint_eq(sink.len, strlen(want));
    ck_assert(memcmp(sink.buf, want, sink.len) == 0);
}

START_TEST(whole_lines_are_tagged)
{
    feed("a\nb\n");
    expect("[3]<stdout>:a\n[3]<stdout>:b\n");
}
END_TEST

START_TEST(partial_line_waits_for_its_end)
{
    feed("hel");
    ck_assert_uint_eq(sink.len, 0);
    feed("lo\nwor");
    expect("[3]<stdout>:hello\n");
    feed("ld\n");
    expect("[3]<stdout>:hello\n[3]<stdout>:world\n");
}
END_TEST

START_TEST(partial_last_line_flushed_at_end)
{
    feed("no newline");
    out_stream_finish(&st, &sink);
    expect("[3]<stdout>:no newline\n");
}
END_TEST

START_TEST(carriage_return_progress_bars)
{
    feed(" 10%\r 20%\r");
    expect("[3]<stdout>: 10%\r[3]<stdout>: 20%\r");
    feed("\ndone\r\n");
    expect("[3]<stdout>: 10%\r[3]<stdout>: 20%\r\n[3]<stdout>:done\r\n");
}
END_TEST

START_TEST(stderr_tag)
{
    out_stream s2;

    out_stream_init(&s2, 12, 1, 0, -1);
    out_stream_feed(&s2, "x\n", 2, &sink);
    expect("[12]<stderr>:x\n");
    out_stream_release(&s2);
}
END_TEST

START_TEST(timestamps_prefix_the_tag)
{
    out_stream s2;

    out_stream_init(&s2, 0, 0, 1, -1);
    out_stream_feed(&s2, "x\n", 2, &sink);
    /* "YYYY-MM-DD HH:MM:SS.mmm [0]<stdout>:x\n" */
    ck_assert_uint_eq(sink.len, 24 + 14);
    ck_assert(memcmp(sink.buf + 24, "[0]<stdout>:x\n", 14) == 0);
    ck_assert_int_eq(sink.buf[4], '-');
    out_stream_release(&s2);
}
END_TEST

START_TEST(last_lines_for_the_summary)
{
    char buf[256];

    feed("one\ntwo\nthree\nfour\n");
    out_stream_last_lines(&st, 2, buf, sizeof(buf));
    ck_assert_str_eq(buf, "three\nfour\n");
    out_stream_last_lines(&st, 10, buf, sizeof(buf));
    ck_assert_str_eq(buf, "one\ntwo\nthree\nfour\n");
}
END_TEST

START_TEST(sink_writes_to_fd)
{
    int p[2];
    char buf[64] = "";

    ck_assert_int_eq(pipe(p), 0);
    sink.fd = p[1];
    feed("hi\n");
    out_sink_flush(&sink);
    ck_assert_int_eq(read(p[0], buf, sizeof(buf)), 15);
    ck_assert_str_eq(buf, "[3]<stdout>:hi\n");
    close(p[0]);
    close(p[1]);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("output");
    TCase *tc = tcase_create("framing");

    tcase_add_checked_fixture(tc, setup, teardown);
    ADD(tc, whole_lines_are_tagged);
    ADD(tc, partial_line_waits_for_its_end);
    ADD(tc, partial_last_line_flushed_at_end);
    ADD(tc, carriage_return_progress_bars);
    ADD(tc, stderr_tag);
    ADD(tc, timestamps_prefix_the_tag);
    ADD(tc, last_lines_for_the_summary);
    ADD(tc, sink_writes_to_fd);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
