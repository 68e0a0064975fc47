/* The channel's frames as both ends read them (hvdd_chan.h): a header
 * line of words whose last ones are the lengths of what follows it; and
 * what both ends have yet to write. */
#include "hvdd_chan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hvd_numbers.h"

ssize_t
hvdd_frames_read(hvdd_frames *f, int fd, size_t max)
{
    ssize_t n;

    if (f->off > 0) { /* what was taken goes once per read, not per frame */
        memmove(f->p, f->p + f->off, f->len - f->off);
        f->len -= f->off;
        f->off = 0;
    }
    if (f->len >= max) {
        errno = EMSGSIZE;
        return -1;
    }
    if (f->cap - f->len < 4096) {
        size_t cap = f->cap ? f->cap * 2 : 8192;
        char *p = realloc(f->p, cap + 1);
        if (p == NULL)
            return -1;
        f->p = p;
        f->cap = cap;
    }
    while ((n = recv(fd, f->p + f->len, f->cap - f->len, MSG_DONTWAIT)) < 0 &&
           errno == EINTR)
        ;
    if (n > 0)
        f->len += (size_t)n;
    return n;
}

/* fr's line cut into words: their count. */
static int
split(hvdd_frame *fr)
{
    int n = 0;
    char *save = NULL;

    for (char *s = fr->line; n < 8; s = NULL)
        if ((fr->word[n] = strtok_r(s, " ", &save)) == NULL)
            return n;
        else
            n++;
    return strtok_r(NULL, " ", &save) ? 9 : 8;
}

int
hvdd_frames_next(hvdd_frames *f, int nwords, int nlens, size_t max,
                 hvdd_frame *fr)
{
    const char *at = f->p + f->off;
    size_t have = f->len - f->off, head, body = 0;
    const char *nl = have ? memchr(at, '\n', have) : NULL;

    if (nl == NULL)
        return have >= HVDD_CHAN_MAX_LINE ? -1 : 0;
    head = (size_t)(nl - at);
    if (head >= HVDD_CHAN_MAX_LINE || memchr(at, '\0', head))
        return -1;
    memcpy(fr->line, at, head);
    fr->line[head] = '\0';
    if (split(fr) != nwords || nlens < 1 || nlens > 2 || nlens > nwords)
        return -1;
    fr->len[1] = 0;
    for (int k = 0; k < nlens; k++) {
        long v;
        if (hvd_parse_long(fr->word[nwords - nlens + k], 0, 1L << 40, &v))
            return -1;
        fr->len[k] = (size_t)v;
        body += fr->len[k];
    }
    if (body > max)
        return -1; /* at once, before its bytes are buffered */
    if (have - head - 1 < body)
        return 0;
    fr->payload = nl + 1;
    fr->bytes = head + 1 + body;
    return 1;
}

void
hvdd_frames_drop(hvdd_frames *f, const hvdd_frame *fr)
{
    f->off += fr->bytes;
    if (f->off == f->len)
        f->off = f->len = 0;
}

void
hvdd_frames_release(hvdd_frames *f)
{
    free(f->p);
    memset(f, 0, sizeof(*f));
}

int
hvdd_outbox_add(hvdd_outbox *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n)
            cap *= 2;
        char *q = realloc(o->p, cap);
        if (q == NULL)
            return -1;
        o->p = q;
        o->cap = cap;
    }
    memcpy(o->p + o->len, p, n);
    o->len += n;
    return 0;
}

int
hvdd_outbox_flush(hvdd_outbox *o, int fd)
{
    while (o->len) {
        ssize_t w = send(fd, o->p, o->len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (w <= 0)
            return -1;
        memmove(o->p, o->p + w, o->len - (size_t)w);
        o->len -= (size_t)w;
    }
    return 0;
}

void
hvdd_outbox_release(hvdd_outbox *o)
{
    free(o->p);
    memset(o, 0, sizeof(*o));
}
