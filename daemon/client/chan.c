/* The launcher's end of the channel to hvdd (hvdd_chan.h). One thread
 * uses it: the fleet's loop. Nothing here blocks but hvdd_chan_call's
 * wait: requests queue until the socket takes them (hvdd prints its
 * warnings to a pipe the launcher reads, holding its lock: a launcher
 * blocked on a write to hvdd could never read them), and answers are
 * read as they come. */
#include "hvdd_chan.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hvd_clock.h"
#include "hvd_numbers.h"

/* What is read and not yet taken, at most: an answer of hvdd's is at
 * most a 1 MiB value; many wait only when nobody takes them. */
#define CHAN_MAX_IN ((size_t)64 << 20)
/* Requests not yet written, at most (hvdd takes them as they come) */
#define CHAN_MAX_OUT ((size_t)64 << 20)

typedef struct kept {
    struct kept *next;
    hvdd_chan_answer a;
} kept;

struct hvdd_chan {
    int fd;
    int gone; /* hvdd's end closed, or a broken frame */
    uint64_t last_id;
    hvdd_frames in;
    hvdd_outbox out;   /* requests not yet written */
    kept *head, *tail; /* answers taken in while a call waited */
};

hvdd_chan *
hvdd_chan_new(int fd)
{
    hvdd_chan *ch = calloc(1, sizeof(*ch));

    if (ch == NULL) {
        close(fd);
        return NULL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    ch->fd = fd;
    return ch;
}

void
hvdd_chan_free(hvdd_chan *ch)
{
    if (ch == NULL)
        return;
    while (ch->head) {
        kept *k = ch->head;
        ch->head = k->next;
        free(k->a.body);
        free(k);
    }
    hvdd_frames_release(&ch->in);
    hvdd_outbox_release(&ch->out);
    close(ch->fd);
    free(ch);
}

int
hvdd_chan_fd(const hvdd_chan *ch, short *events)
{
    *events = (short)(POLLIN | (ch->out.len ? POLLOUT : 0));
    return ch->gone ? -1 : ch->fd;
}

uint64_t
hvdd_chan_next_id(hvdd_chan *ch)
{
    return ++ch->last_id;
}

static void
flush_out(hvdd_chan *ch)
{
    if (!ch->gone && hvdd_outbox_flush(&ch->out, ch->fd) != 0)
        ch->gone = 1;
}

int
hvdd_chan_send(hvdd_chan *ch, uint64_t id, const char *method, const char *path,
               long wait_ms, const void *body, size_t len)
{
    char line[HVDD_CHAN_MAX_LINE];
    size_t plen = strlen(path), at = ch->out.len;
    int n;

    flush_out(ch);
    if (ch->gone)
        return HVDD_ECONNECT;
    if (plen == 0 || plen > HVDD_CHAN_MAX_PATH || len > HVDD_CHAN_MAX_BODY)
        return HVDD_EINVAL;
    n = snprintf(line, sizeof(line), "%" PRIu64 " %s %ld %zu %zu\n", id, method,
                 wait_ms < 0 ? 0 : wait_ms, plen, len);
    if (n < 0 || (size_t)n >= sizeof(line))
        return HVDD_EINVAL;
    if (ch->out.len + (size_t)n + plen + len > CHAN_MAX_OUT)
        return HVDD_ENOMEM;
    if (hvdd_outbox_add(&ch->out, line, (size_t)n) != 0 ||
        hvdd_outbox_add(&ch->out, path, plen) != 0 ||
        (len && hvdd_outbox_add(&ch->out, body, len) != 0)) {
        ch->out.len = at; /* none of it */
        return HVDD_ENOMEM;
    }
    flush_out(ch);
    return 0;
}

/* The next whole answer in what came: 1, 0 (none yet), -1 (broken). */
static int
parse_one(hvdd_chan *ch, hvdd_chan_answer *a)
{
    hvdd_frame fr;
    int r = hvdd_frames_next(&ch->in, 3, 1, CHAN_MAX_IN, &fr);
    long id, status;

    if (r <= 0)
        return r;
    if (hvd_parse_long(fr.word[0], 0, LONG_MAX, &id) ||
        hvd_parse_long(fr.word[1], 100, 599, &status) ||
        (a->body = malloc(fr.len[0] + 1)) == NULL)
        return -1;
    a->id = (uint64_t)id;
    a->status = (int)status;
    memcpy(a->body, fr.payload, fr.len[0]);
    a->body[fr.len[0]] = '\0';
    a->len = fr.len[0];
    hvdd_frames_drop(&ch->in, &fr);
    return 1;
}

/* Reads and parses: 1 with an answer, 0 for none now, -1 once gone. */
static int
next_answer(hvdd_chan *ch, hvdd_chan_answer *a)
{
    flush_out(ch);
    for (;;) {
        int r = ch->gone ? 0 : parse_one(ch, a);
        if (r != 0) {
            ch->gone |= r < 0;
            return r;
        }
        if (ch->gone)
            return -1;
        ssize_t n = hvdd_frames_read(&ch->in, ch->fd, CHAN_MAX_IN);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0)
            ch->gone = 1;
    }
}

int
hvdd_chan_take(hvdd_chan *ch, hvdd_chan_answer *a)
{
    kept *k = ch->head;

    if (k) {
        if ((ch->head = k->next) == NULL)
            ch->tail = NULL;
        *a = k->a;
        free(k);
        return 1;
    }
    return next_answer(ch, a);
}

int
hvdd_chan_pending(const hvdd_chan *ch)
{
    hvdd_frame fr;

    return ch->head != NULL ||
           (!ch->gone && hvdd_frames_next((hvdd_frames *)&ch->in, 3, 1,
                                          CHAN_MAX_IN, &fr) == 1);
}

/* Keeps a for hvdd_chan_take (its body is dropped when out of memory). */
static void
keep(hvdd_chan *ch, hvdd_chan_answer *a)
{
    kept *k = malloc(sizeof(*k));

    if (k == NULL) {
        free(a->body);
        return;
    }
    *k = (kept){NULL, *a};
    if (ch->tail)
        ch->tail->next = k;
    else
        ch->head = k;
    ch->tail = k;
}

int
hvdd_chan_call(hvdd_chan *ch, const char *method, const char *path,
               long wait_ms, const void *body, size_t len, long timeout_ms,
               hvdd_chan_answer *a)
{
    uint64_t id = hvdd_chan_next_id(ch);
    double until = hvd_mono_now() + timeout_ms / 1000.0;
    int r = hvdd_chan_send(ch, id, method, path, wait_ms, body, len);

    while (r == 0) {
        hvdd_chan_answer got;
        int n = next_answer(ch, &got);
        if (n < 0)
            return HVDD_ECONNECT;
        if (n > 0 && got.id == id) {
            *a = got;
            return 0;
        }
        if (n > 0) {
            keep(ch, &got);
            continue;
        }
        double left = until - hvd_mono_now();
        if (left <= 0)
            return HVDD_ETIMEOUT;
        struct pollfd p = {ch->fd, 0, 0};
        p.fd = hvdd_chan_fd(ch, &p.events);
        poll(&p, 1, (int)(left * 1000) + 1);
    }
    return r;
}

int
hvdd_chan_post(hvdd_chan *ch, const char *what, json_t *j, long timeout_ms,
               json_t **answer, char *err, size_t errlen)
{
    char path[96], *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    hvdd_chan_answer a = {0};
    json_error_t je;
    int r;

    json_decref(j);
    if (body == NULL) {
        snprintf(err, errlen, "out of memory");
        return HVDD_ENOMEM;
    }
    snprintf(path, sizeof(path), "/v1/%s", what);
    r = hvdd_chan_call(ch, "POST", path, 0, body, strlen(body), timeout_ms, &a);
    free(body);
    if (r != 0)
        snprintf(err, errlen, "%s: %s", path,
                 r == HVDD_ETIMEOUT   ? "timed out"
                 : r == HVDD_ECONNECT ? "hvdd is gone"
                                      : "cannot send it");
    else
        r = hvdd_answer_code(a.status, a.body, a.len, path, err, errlen);
    if (r == 0 && answer &&
        (*answer = json_loadb(a.body, a.len, 0, &je)) == NULL) {
        snprintf(err, errlen, "%s: bad JSON: %s", path, je.text);
        r = HVDD_EPROTO;
    }
    free(a.body);
    return r;
}
