/* What every way of starting an agent shares: the queue of bytes for the
 * agent's stdin, the EOFs of its two streams and its exit code. */
#include "agent_link.h"

#include <stdlib.h>
#include <string.h>

#include "link_way.h"

hvdrun_link *
hvdrun_link_new(const link_way *way, void *impl)
{
    hvdrun_link *l = calloc(1, sizeof(*l));

    if (l) {
        l->way = way;
        l->impl = impl;
    }
    return l;
}

int
hvdrun_link_advance(hvdrun_link *l)
{
    int r;

    if (l->open)
        return 1;
    if ((r = l->way->advance(l)) == 1)
        l->open = 1;
    return r;
}

int
hvdrun_link_is_open(const hvdrun_link *l)
{
    return l->open;
}

int
hvdrun_link_is_remote(const hvdrun_link *l)
{
    return l->way->remote;
}

int
hvdrun_link_logging_in(const hvdrun_link *l)
{
    return l->way->logging_in(l);
}

const char *
hvdrun_link_step(const hvdrun_link *l)
{
    return l->way->step(l);
}

const char *
hvdrun_link_error(const hvdrun_link *l)
{
    return l->way->error(l);
}

const char *
hvdrun_link_local_addr(const hvdrun_link *l)
{
    return l->way->local_addr(l);
}

int
hvdrun_link_send(hvdrun_link *l, const char *data, size_t n)
{
    char *p = realloc(l->pending, l->pending_len + n);

    if (p == NULL)
        return -1;
    memcpy(p + l->pending_len, data, n);
    l->pending = p;
    l->pending_len += n;
    hvdrun_link_flush(l);
    return 0;
}

void
hvdrun_link_flush(hvdrun_link *l)
{
    ssize_t n = 1;

    while (l->open && !l->done && l->pending_len > 0 && n > 0) {
        n = l->way->write(l, l->pending, l->pending_len);
        if (n > 0) {
            memmove(l->pending, l->pending + n, l->pending_len - (size_t)n);
            l->pending_len -= (size_t)n;
        } else if (n < 0) {
            l->pending_len = 0; /* the agent is gone: nobody to tell */
        }
    }
}

ssize_t
hvdrun_link_read(hvdrun_link *l, int stream, char *buf, size_t n)
{
    ssize_t r;

    if (l->eof[stream] || !l->open)
        return -1;
    if ((r = l->way->read(l, stream, buf, n)) == 0)
        l->eof[stream] = 1;
    return r;
}

int
hvdrun_link_reap(hvdrun_link *l)
{
    if (l->done)
        return 1;
    if (!l->eof[0] || !l->eof[1] || !l->way->finish(l, &l->code))
        return 0;
    l->done = 1;
    return 1;
}

int
hvdrun_link_code(const hvdrun_link *l)
{
    return l->code;
}

int
hvdrun_link_pollfd(const hvdrun_link *l, int stream, short *events)
{
    return l->way->pollfd(l, stream, events);
}

int
hvdrun_link_ready(const hvdrun_link *l)
{
    return !l->done && l->way->ready && l->way->ready(l);
}

void
hvdrun_link_keepalive(hvdrun_link *l)
{
    if (l->open && !l->done)
        l->way->keepalive(l);
}

void
hvdrun_link_free(hvdrun_link *l)
{
    if (l == NULL)
        return;
    l->way->close(l);
    free(l->pending);
    free(l);
}
