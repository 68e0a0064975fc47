/* The launcher's end of the channel to hvdd (hvdd_chan.h). One thread
 * uses it: the fleet's loop. Writes block (hvdd reads its end at once,
 * its answers wait in its own buffer), reads never do. */
#include "hvdd_chan.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hvd_clock.h"

/* Answers kept at most: hvdd's to bodies of up to its 1 MiB values. */
#define CHAN_MAX_BUFFERED ((size_t)64 << 20)

typedef struct kept {
    struct kept *next;
    hvdd_chan_answer a;
} kept;

struct hvdd_chan {
    int fd;
    int gone; /* hvdd's end closed, or a broken frame */
    uint64_t last_id;
    hvdd_frames in;
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
    close(ch->fd);
    free(ch);
}

int
hvdd_chan_fd(const hvdd_chan *ch)
{
    return ch->fd;
}

uint64_t
hvdd_chan_next_id(hvdd_chan *ch)
{
    return ++ch->last_id;
}

/* Sends every byte of v (MSG_NOSIGNAL: a gone hvdd is an error, not a
 * SIGPIPE): 0, or -1. */
static int
write_all(int fd, struct iovec *v, int n)
{
    while (n > 0) {
        struct msghdr m = {.msg_iov = v, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        size_t done = (size_t)w;
        while (n > 0 && done >= v->iov_len) {
            done -= v->iov_len;
            v++;
            n--;
        }
        if (n > 0) {
            v->iov_base = (char *)v->iov_base + done;
            v->iov_len -= done;
        }
    }
    return 0;
}

int
hvdd_chan_send(hvdd_chan *ch, uint64_t id, const char *method, const char *path,
               long wait_ms, const void *body, size_t len)
{
    char line[HVDD_CHAN_MAX_LINE];
    size_t plen = strlen(path);
    int n;

    if (ch->gone)
        return HVDD_ECONNECT;
    if (plen > HVDD_CHAN_MAX_PATH)
        return HVDD_EINVAL;
    n = snprintf(line, sizeof(line), "%" PRIu64 " %s %ld %zu %zu\n", id, method,
                 wait_ms < 0 ? 0 : wait_ms, plen, len);
    if (n < 0 || (size_t)n >= sizeof(line))
        return HVDD_EINVAL;
    struct iovec v[3] = {{line, (size_t)n},
                         {(void *)path, plen},
                         {(void *)(body ? body : ""), body ? len : 0}};
    if (write_all(ch->fd, v, 3) != 0) {
        ch->gone = 1;
        return HVDD_ECONNECT;
    }
    return 0;
}

/* The next whole answer in what came: 1, 0 (none yet), -1 (broken). */
static int
parse_one(hvdd_chan *ch, hvdd_chan_answer *a)
{
    char line[HVDD_CHAN_MAX_LINE];
    const char *payload;
    size_t frame, len;
    int r = hvdd_frames_next(&ch->in, 1, line, &payload, &frame), status;
    uint64_t id;

    if (r <= 0)
        return r;
    if (sscanf(line, "%" SCNu64 " %d %zu", &id, &status, &len) != 3)
        return -1;
    if ((a->body = malloc(len + 1)) == NULL)
        return -1;
    memcpy(a->body, payload, len);
    a->body[len] = '\0';
    a->id = id;
    a->status = status;
    a->len = len;
    hvdd_frames_drop(&ch->in, frame);
    return 1;
}

/* Reads and parses: 1 with an answer, 0 for none now, -1 once gone. */
static int
next_answer(hvdd_chan *ch, hvdd_chan_answer *a)
{
    for (;;) {
        int r = ch->gone ? 0 : parse_one(ch, a);
        if (r != 0) {
            ch->gone |= r < 0;
            return r;
        }
        if (ch->gone)
            return -1;
        ssize_t n = hvdd_frames_read(&ch->in, ch->fd, CHAN_MAX_BUFFERED);
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
    hvdd_frames in = ch->in; /* (looked at, not changed) */
    char line[HVDD_CHAN_MAX_LINE];
    const char *payload;
    size_t frame;

    return ch->head != NULL ||
           (!ch->gone && hvdd_frames_next(&in, 1, line, &payload, &frame) == 1);
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
        struct pollfd p = {ch->fd, POLLIN, 0};
        poll(&p, 1, (int)(left * 1000) + 1);
    }
    return r;
}

int
hvdd_answer_code(int status, const char *body, size_t len, const char *what,
                 char *err, size_t errlen)
{
    const char *why = body && len ? body : "";
    int n = (int)strcspn(why, "\n"), code;

    if (status == 200)
        return 0;
    switch (status) {
    case 404:
        code = HVDD_ENOTFOUND;
        break;
    case 408:
        code = HVDD_ETIMEOUT;
        break;
    case 410: /* the job aborted, or a rejoin of a worker left out */
        code =
            strncmp(why, "job aborted", 11) == 0 ? HVDD_EABORTED : HVDD_EGONE;
        break;
    default:
        code = status >= 400 && status < 500 ? HVDD_EREFUSED : HVDD_EPROTO;
    }
    if (code == HVDD_EREFUSED || code == HVDD_EPROTO)
        snprintf(err, errlen, "%s: HTTP %d: %.*s", what, status, n, why);
    else
        snprintf(err, errlen, "%s: %.*s", what, n, why);
    return code;
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
                 r == HVDD_ETIMEOUT ? "timed out" : "hvdd is gone");
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
