/* The channel's frames as both ends read them (hvdd_chan.h): a header
 * line of words whose last ones are the lengths of what follows it. */
#include "hvdd_chan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

ssize_t
hvdd_frames_read(hvdd_frames *f, int fd, size_t max)
{
    ssize_t n;

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

/* The decimal number of word (no sign, nothing else): 0, or -1. */
static int
length_of(const char *word, size_t *out)
{
    char *end;
    unsigned long long v;

    if (*word < '0' || *word > '9')
        return -1;
    errno = 0;
    v = strtoull(word, &end, 10);
    if (errno || *end || v > (1ull << 40))
        return -1;
    *out = (size_t)v;
    return 0;
}

int
hvdd_frames_next(hvdd_frames *f, int nlens, char *line, const char **payload,
                 size_t *frame)
{
    char *nl = f->len ? memchr(f->p, '\n', f->len) : NULL;
    char copy[HVDD_CHAN_MAX_LINE], *w[8];
    size_t head, body = 0;
    int nw = 0;

    if (nl == NULL)
        return f->len >= HVDD_CHAN_MAX_LINE ? -1 : 0;
    head = (size_t)(nl - f->p);
    if (head >= HVDD_CHAN_MAX_LINE || memchr(f->p, '\0', head))
        return -1;
    memcpy(line, f->p, head);
    line[head] = '\0';
    memcpy(copy, line, head + 1);
    for (char *s = copy, *save = NULL; nw < 8; s = NULL) {
        if ((w[nw] = strtok_r(s, " ", &save)) == NULL)
            break;
        nw++;
    }
    if (nw < nlens)
        return -1;
    for (int k = nw - nlens; k < nw; k++) {
        size_t v;
        if (length_of(w[k], &v) != 0 || body + v < body)
            return -1;
        body += v;
    }
    if (f->len - head - 1 < body)
        return 0;
    *payload = nl + 1;
    *frame = head + 1 + body;
    return 1;
}

void
hvdd_frames_drop(hvdd_frames *f, size_t frame)
{
    memmove(f->p, f->p + frame, f->len - frame);
    f->len -= frame;
}

void
hvdd_frames_release(hvdd_frames *f)
{
    free(f->p);
    memset(f, 0, sizeof(*f));
}
