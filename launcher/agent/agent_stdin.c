/* The agent's stdin, less the relay's answers (agent_relay.h): a thread
 * reads the real stdin and passes every other line on, unchanged and as
 * it comes (the job's brief may be megabytes), to a pipe that is fd 0
 * for the rest of the agent; the answers go to their calls at once, even
 * while nothing reads fd 0 (the workers' loop, waiting on a call). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_relay.h"
#include "quiet_thread.h"

/* An answer longer than this is no answer of ours: dropped */
#define MAX_ANSWER (16u << 20)

/* Bytes from off to len are waiting (a read offset: the brief may be
 * megabytes, and moving the rest down at every write cost O(n^2)). */
typedef struct bytes {
    char *p;
    size_t off, len, cap;
} bytes;

typedef struct demux {
    int in, out;  /* the real stdin; the pipe's write end (non-blocking) */
    bytes got;    /* read, not yet sorted */
    bytes ahead;  /* for the pipe, not yet written */
    int passing;  /* inside a line that goes to the pipe */
    int skipping; /* inside an answer too long to be one: dropped */
    int eof;
} demux;

static int
add(bytes *b, const char *p, size_t n)
{
    if (b->off > 0 && b->len + n > b->cap) { /* room first at the front */
        memmove(b->p, b->p + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        char *q;
        while (cap < b->len + n)
            cap *= 2;
        if ((q = realloc(b->p, cap)) == NULL)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

static void
consume(bytes *b, size_t n)
{
    b->off += n;
    if (b->off == b->len)
        b->off = b->len = 0;
}

static size_t
waiting(const bytes *b)
{
    return b->len - b->off;
}

/* Sorts what came: answers out, the rest ahead for the pipe. */
static void
sort_lines(demux *d)
{
    size_t plen = strlen(AGENT_RELAY_ANSWER);

    while (waiting(&d->got) > 0) {
        char *at = d->got.p + d->got.off;
        size_t have = waiting(&d->got);
        char *nl = memchr(at, '\n', have);
        size_t line = nl ? (size_t)(nl - at) + 1 : have;
        if (d->skipping) {
            d->skipping = nl == NULL;
            consume(&d->got, line);
            continue;
        }
        if (!d->passing && have < plen && !nl && !d->eof)
            return; /* too short to tell yet */
        if (!d->passing &&
            (have < plen || memcmp(at, AGENT_RELAY_ANSWER, plen)))
            d->passing = 1;
        if (d->passing) {
            if (add(&d->ahead, at, line) != 0)
                return; /* out of memory: later */
            d->passing = nl == NULL;
            consume(&d->got, line);
            continue;
        }
        if (nl == NULL) { /* an answer still coming */
            if (have > MAX_ANSWER) {
                d->skipping = 1;
                consume(&d->got, have);
            }
            return;
        }
        *nl = '\0';
        agent_relay_answer(at + plen);
        consume(&d->got, line);
    }
}

static void
flush_ahead(demux *d)
{
    while (waiting(&d->ahead) > 0) {
        ssize_t w =
            write(d->out, d->ahead.p + d->ahead.off, waiting(&d->ahead));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno != EAGAIN)
            d->ahead.off = d->ahead.len = 0; /* nobody reads fd 0 any more */
        if (w <= 0)
            return;
        consume(&d->ahead, (size_t)w);
    }
}

static void
ended(demux *d)
{
    d->eof = 1;
    agent_relay_gone(); /* before fd 0 ends: calls fail fast */
}

static void *
run(void *arg)
{
    demux *d = arg;
    char buf[65536];

    while (!d->eof || waiting(&d->ahead) > 0) {
        struct pollfd p[2] = {{d->eof ? -1 : d->in, POLLIN, 0},
                              {waiting(&d->ahead) ? d->out : -1, POLLOUT, 0}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents) {
            ssize_t n = read(d->in, buf, sizeof(buf));
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            /* (out of memory to hold it: no way on, as if it ended) */
            if (n <= 0 || add(&d->got, buf, (size_t)n) != 0)
                ended(d);
            sort_lines(d);
        }
        if (p[1].revents & (POLLERR | POLLHUP))
            d->ahead.off = d->ahead.len = 0; /* nobody reads fd 0 */
        flush_ahead(d);
        sort_lines(d); /* what waited for room ahead */
    }
    if (!d->eof)
        ended(d);
    close(d->out); /* fd 0's EOF */
    close(d->in);
    free(d->got.p);
    free(d->ahead.p);
    free(d);
    return NULL;
}

int
agent_stdin_start(void)
{
    demux *d = calloc(1, sizeof(*d));
    int p[2], saved;
    pthread_t t;

    if (d == NULL)
        return -1;
    d->in = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    if (d->in < 0 || pipe2(p, O_CLOEXEC) != 0)
        goto fail;
    if (dup2(p[0], STDIN_FILENO) < 0) {
        close(p[0]);
        close(p[1]);
        goto fail;
    }
    close(p[0]);
    d->out = p[1];
    fcntl(d->out, F_SETFL, O_NONBLOCK);
    if (quiet_thread_start(&t, run, d) != 0) {
        close(d->out);
        goto fail;
    }
    pthread_detach(t);
    return 0;
fail:
    saved = errno;
    if (d->in >= 0)
        close(d->in);
    free(d);
    errno = saved;
    return -1;
}
