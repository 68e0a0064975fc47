#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* A line longer than this is cut and written in pieces, each tagged, so
 * that one endless line cannot take all memory. */
#define MAX_LINE (1 << 20)

void
out_sink_init(out_sink *s, int fd)
{
    memset(s, 0, sizeof(*s));
    s->fd = fd;
}

/* (a sink holds whole lines: one lock per write keeps them whole) One
 * lock per standard fd: a stalled stderr does not hold up stdout, where
 * an agent's calls to hvdd go. */
static pthread_mutex_t out_locks[4] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};

int
out_write(int fd, const void *data, size_t n)
{
    pthread_mutex_t *lock = &out_locks[fd >= 0 && fd < 3 ? fd : 3];
    const char *p = data;
    int r = 0;

    pthread_mutex_lock(lock);
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            r = -1;
            break;
        }
        p += w;
        n -= (size_t)w;
    }
    pthread_mutex_unlock(lock);
    return r;
}

static void
write_all(out_sink *s, const char *p, size_t n)
{
    if (n > 0 && !s->broken && out_write(s->fd, p, n) != 0)
        s->broken = 1;
}

void
out_sink_flush(out_sink *s)
{
    write_all(s, s->buf, s->len);
    s->len = 0;
}

void
out_sink_release(out_sink *s)
{
    out_sink_flush(s);
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

void
out_sink_add(out_sink *s, const char *p, size_t n)
{
    if (n == 0)
        return;
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 65536;
        char *b;
        while (cap < s->len + n)
            cap *= 2;
        if ((b = realloc(s->buf, cap)) == NULL) {
            out_sink_flush(s);
            write_all(s, p, n);
            return;
        }
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
}

static void
sink_prefix(const out_stream *st, out_sink *s)
{
    char ts[64];
    struct timeval tv;
    struct tm tm;
    size_t n;

    if (st->timestamps) {
        gettimeofday(&tv, NULL);
        localtime_r(&tv.tv_sec, &tm);
        n = strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
        n += snprintf(ts + n, sizeof(ts) - n, ".%03ld ",
                      (long)tv.tv_usec / 1000);
        out_sink_add(s, ts, n);
    }
    out_sink_add(s, st->tag, strlen(st->tag));
}

void
out_stream_init(out_stream *s, int rank, int is_stderr, int timestamps,
                int file_fd)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->tag, sizeof(s->tag), "[%d]<%s>:", rank,
             is_stderr ? "stderr" : "stdout");
    s->timestamps = timestamps;
    s->file_fd = file_fd;
}

void
out_stream_retag(out_stream *s, int rank, int is_stderr)
{
    snprintf(s->tag, sizeof(s->tag), "[%d]<%s>:", rank,
             is_stderr ? "stderr" : "stdout");
}

static void
keep_tail(out_stream *s, const char *p, size_t n)
{
    size_t cap = sizeof(s->tail);

    if (n >= cap) {
        memcpy(s->tail, p + n - cap, cap);
        s->tail_len = cap;
        return;
    }
    if (s->tail_len + n > cap) {
        size_t drop = s->tail_len + n - cap;
        memmove(s->tail, s->tail + drop, s->tail_len - drop);
        s->tail_len -= drop;
    }
    memcpy(s->tail + s->tail_len, p, n);
    s->tail_len += n;
}

/* Emits the unfinished line plus p[0..n) as one tagged segment. */
static void
emit(out_stream *s, const char *p, size_t n, out_sink *sink)
{
    sink_prefix(s, sink);
    out_sink_add(sink, s->line, s->len);
    out_sink_add(sink, p, n);
    s->len = 0;
}

static int
hold(out_stream *s, const char *p, size_t n)
{
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        char *b;
        while (cap < s->len + n)
            cap *= 2;
        if ((b = realloc(s->line, cap)) == NULL)
            return -1;
        s->line = b;
        s->cap = cap;
    }
    memcpy(s->line + s->len, p, n);
    s->len += n;
    return 0;
}

void
out_stream_feed(out_stream *s, const char *data, size_t n, out_sink *sink)
{
    const char *p = data, *end = data + n;

    if (s->file_fd >= 0 && write(s->file_fd, data, n) < 0)
        s->file_fd = -1;
    keep_tail(s, data, n);
    if (n > 0 && s->after_cr && p[0] == '\n') {
        out_sink_add(sink, "\n", 1); /* the '\n' of a "\r\n" split by a read */
        p++;
    }
    s->after_cr = 0;
    while (p < end) {
        const char *q = p;
        while (q < end && *q != '\n' && *q != '\r')
            q++;
        if (q == end) {
            if (s->len + (end - p) > MAX_LINE || hold(s, p, end - p) != 0) {
                emit(s, p, end - p, sink);
                out_sink_add(sink, "\n", 1);
            }
            return;
        }
        if (*q == '\r' && q + 1 < end && q[1] == '\n')
            q++;
        else if (*q == '\r' && q + 1 == end)
            s->after_cr = 1;
        emit(s, p, q + 1 - p, sink);
        p = q + 1;
    }
}

void
out_stream_finish(out_stream *s, out_sink *sink)
{
    if (s->len > 0)
        emit(s, "\n", 1, sink);
}

void
out_stream_release(out_stream *s)
{
    free(s->line);
    s->line = NULL;
    s->len = s->cap = 0;
    if (s->file_fd >= 0)
        close(s->file_fd);
    s->file_fd = -1;
}

void
out_stream_last_lines(const out_stream *s, int lines, char *buf, size_t size)
{
    size_t start = s->tail_len, n;

    /* Skip a final newline, then walk back over `lines` line starts. */
    if (start > 0 && s->tail[start - 1] == '\n')
        start--;
    while (start > 0 && lines > 0) {
        start--;
        if (s->tail[start] == '\n' && --lines == 0)
            start++;
    }
    n = s->tail_len - start;
    if (n >= size)
        n = size - 1;
    memcpy(buf, s->tail + s->tail_len - n, n);
    buf[n] = '\0';
}

int
out_open_rank_file(const char *dir, int rank, int size, const char *name)
{
    char path[4096];
    int width = snprintf(NULL, 0, "%d", size > 1 ? size - 1 : 0);

    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return -1;
    snprintf(path, sizeof(path), "%s/rank.%0*d", dir, width, rank);
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return -1;
    snprintf(path, sizeof(path), "%s/rank.%0*d/%s", dir, width, rank, name);
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
}
