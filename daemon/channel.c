/* hvdd's end of the launcher's channel (channel.h). One thread: poll the
 * socket and a wake-up pipe; run each request that comes, in order, and
 * each held one once released; write what is answered as the socket
 * takes it. */
#include "channel.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hvd_clock.h"
#include "hvd_numbers.h"
#include "hvdd_chan.h"

/* What is read and not yet run, at most: a request's path and a body
 * larger than HTTP's (which is answered 413, the channel going on) */
#define CHANNEL_MAX_IN (2 * HVDD_MAX_BODY + HVDD_CHAN_MAX_PATH)
/* Requests run or held at once, at most (more are answered 503): the
 * launcher's own caps keep far below it */
#define CHANNEL_MAX_LIVE 65536

/* the launcher refuses what hvdd would (hvdd_chan.h keeps its own copy:
 * hvddchan does not see hvdd's core) */
_Static_assert(HVDD_CHAN_MAX_BODY == HVDD_MAX_BODY,
               "the channel's body limit is hvdd's");

/* A channel request: conn first, so that server.c's conn is ours. */
typedef struct chan_req {
    conn c;
    uint64_t id;
    char method[8];
    char path[HVDD_CHAN_MAX_PATH + 1];
    char wait[24];                        /* ?wait=ms's value, or "" */
    struct chan_req *all_next, *all_prev; /* every request not answered */
} chan_req;

struct hvdd_channel {
    hvdd_server *s;
    int fd;
    int wake[2];
    pthread_t thread;
    int started;
    int stop;       /* under the server's lock */
    conn *ready;    /* released, to run again (under the server's lock) */
    chan_req *live; /* this thread's own list */
    int nlive;
    hvdd_frames in;
    hvdd_outbox out; /* answers not yet written */
    char auth[HVDD_TOKEN_HEX + 16];
};

/* Queues an answer's frame (dropped when out of memory: the launcher's
 * call then waits out its own timeout). */
static void
queue_answer(hvdd_channel *ch, uint64_t id, const hvdd_response *rs)
{
    char line[HVDD_CHAN_MAX_LINE];
    int n = snprintf(line, sizeof(line), "%" PRIu64 " %d %zu\n", id, rs->status,
                     rs->body ? rs->len : 0);
    size_t at = ch->out.len;

    if (hvdd_outbox_add(&ch->out, line, (size_t)n) != 0 ||
        (rs->body && hvdd_outbox_add(&ch->out, rs->body, rs->len) != 0))
        ch->out.len = at; /* none of it */
}

static void
unlink_req(hvdd_channel *ch, chan_req *q)
{
    if (q->all_prev)
        q->all_prev->all_next = q->all_next;
    else
        ch->live = q->all_next;
    if (q->all_next)
        q->all_next->all_prev = q->all_prev;
    ch->nlive--;
    free(q->c.body);
    free(q);
}

/* Runs q (again, after a release): answered, or held once more. */
static void
run(hvdd_channel *ch, chan_req *q)
{
    hvdd_request rq = {
        .method = q->method,
        .path = q->path,
        .wait = q->wait[0] ? q->wait : NULL,
        .auth = ch->auth,
        .body = q->c.body,
        .body_len = q->c.len,
        .peer_allowed = 1,
        .peer = "127.0.0.1",
        .deadline_passed = q->c.deadline_passed,
        .conn_state = &q->c.conn_state,
        .now = hvd_mono_now(),
    };
    hvdd_response rs = {0};

    if (hvdd_server_run(ch->s, &q->c, &rq, &rs))
        return;
    if (q->id)
        queue_answer(ch, q->id, &rs);
    free(rs.body);
    unlink_req(ch, q);
}

/* Answers a request that is not run (it was refused at the door). */
static void
refuse(hvdd_channel *ch, uint64_t id, int status, const char *why)
{
    hvdd_response rs = {
        .status = status, .body = (char *)why, .len = strlen(why)};

    if (id)
        queue_answer(ch, id, &rs);
}

static int
is_method(const char *m)
{
    return strcmp(m, "GET") == 0 || strcmp(m, "PUT") == 0 ||
           strcmp(m, "POST") == 0 || strcmp(m, "DELETE") == 0;
}

/* A request out of its frame (header "ID METHOD WAIT PATHLEN BODYLEN"),
 * run or refused: 0, or -1 when the header is not one (the channel is
 * then done: only the launcher holds its other end, so that is a bug). */
static int
take_request(hvdd_channel *ch, const hvdd_frame *fr)
{
    const char *path = fr->payload;
    size_t plen = fr->len[0], blen = fr->len[1];
    long id, wait;
    chan_req *q;

    if (hvd_parse_long(fr->word[0], 0, LONG_MAX, &id) ||
        !is_method(fr->word[1]) ||
        hvd_parse_long(fr->word[2], 0, LONG_MAX, &wait))
        return -1;
    if (plen == 0 || plen > HVDD_CHAN_MAX_PATH || memchr(path, '\0', plen)) {
        refuse(ch, id, 400, "bad path\n");
        return 0;
    }
    if (blen > HVDD_MAX_BODY) {
        refuse(ch, id, 413, "request body too large\n");
        return 0;
    }
    if (ch->nlive >= CHANNEL_MAX_LIVE) {
        refuse(ch, id, 503, "too many requests at once\n");
        return 0;
    }
    if ((q = calloc(1, sizeof(*q))) == NULL ||
        (blen && (q->c.body = malloc(blen)) == NULL)) {
        free(q);
        refuse(ch, id, 500, "out of memory\n");
        return 0;
    }
    q->id = (uint64_t)id;
    snprintf(q->method, sizeof(q->method), "%s", fr->word[1]);
    memcpy(q->path, path, plen);
    if (blen)
        memcpy(q->c.body, path + plen, blen);
    q->c.len = blen;
    q->c.conn_state = -1;
    q->c.chan = ch;
    if (wait > 0)
        snprintf(q->wait, sizeof(q->wait), "%ld", wait);
    q->all_next = ch->live;
    if (ch->live)
        ch->live->all_prev = q;
    ch->live = q;
    ch->nlive++;
    run(ch, q);
    return 0;
}

/* Reads and runs what came: 0, or -1 once the launcher's end is gone (or
 * sent what is not a frame). */
static int
read_requests(hvdd_channel *ch)
{
    hvdd_frame fr;
    ssize_t n = hvdd_frames_read(&ch->in, ch->fd, CHANNEL_MAX_IN);
    int r;

    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
        return -1;
    while ((r = hvdd_frames_next(&ch->in, 5, 2, CHANNEL_MAX_IN, &fr)) == 1) {
        if (take_request(ch, &fr) != 0)
            return -1;
        hvdd_frames_drop(&ch->in, &fr);
    }
    return r < 0 ? -1 : 0;
}

/* The requests released since the last turn, run again in their order. */
static int
run_released(hvdd_channel *ch)
{
    conn *c, *rev = NULL;
    char drain[64];
    int stop;

    while (read(ch->wake[0], drain, sizeof(drain)) > 0)
        ;
    hvdd_server_lock(ch->s);
    c = ch->ready;
    ch->ready = NULL;
    stop = ch->stop;
    hvdd_server_unlock(ch->s);
    while (c) { /* pushed in front: reverse to their order */
        conn *next = c->ready;
        c->ready = rev;
        rev = c;
        c = next;
    }
    for (c = rev; c; c = rev) {
        rev = c->ready;
        run(ch, (chan_req *)c);
    }
    return stop;
}

static void *
channel_main(void *arg)
{
    hvdd_channel *ch = arg;
    int open = 1;

    for (;;) {
        struct pollfd p[2] = {{ch->wake[0], POLLIN, 0},
                              {open ? ch->fd : -1,
                               (short)(POLLIN | (ch->out.len ? POLLOUT : 0)),
                               0}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents && run_released(ch)) {
            if (open) /* the 503s of the stop, if they go */
                hvdd_outbox_flush(&ch->out, ch->fd);
            break;
        }
        if (open && (p[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) &&
            read_requests(ch) != 0)
            open = 0;
        if (open && hvdd_outbox_flush(&ch->out, ch->fd) != 0)
            open = 0;
        if (!open) { /* the launcher is gone, or sent what is not a
                        request: it sees the end (held requests answer
                        to nobody) */
            shutdown(ch->fd, SHUT_RDWR);
            ch->out.len = 0;
        }
    }
    return NULL;
}

hvdd_channel *
hvdd_channel_start(hvdd_server *s, int fd, char *err, size_t errlen)
{
    hvdd_channel *ch = calloc(1, sizeof(*ch));
    sigset_t all, old;

    if (ch == NULL || pipe2(ch->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(err, errlen, "cannot serve the launcher's channel: %s",
                 strerror(errno));
        free(ch);
        close(fd);
        return NULL;
    }
    ch->s = s;
    ch->fd = fd;
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    int type = 0;
    socklen_t tl = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
        type != SOCK_STREAM) {
        snprintf(err, errlen, "--channel-fd %d: not a stream socket", fd);
        hvdd_channel_stop(ch);
        return NULL;
    }
    snprintf(ch->auth, sizeof(ch->auth), "Bearer %s", hvdd_server_token(s));
    sigfillset(&all); /* hvdd's signals are its main thread's */
    pthread_sigmask(SIG_BLOCK, &all, &old);
    ch->started = pthread_create(&ch->thread, NULL, channel_main, ch) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!ch->started) {
        snprintf(err, errlen, "cannot serve the launcher's channel: no thread");
        hvdd_channel_stop(ch);
        return NULL;
    }
    return ch;
}

void
hvdd_channel_released(hvdd_channel *ch, conn *c)
{
    c->ready = ch->ready;
    ch->ready = c;
    if (write(ch->wake[1], "r", 1) < 0)
        (void)0; /* full: readable anyway */
}

void
hvdd_channel_stop(hvdd_channel *ch)
{
    if (ch == NULL)
        return;
    if (ch->started) {
        hvdd_server_lock(ch->s);
        ch->stop = 1;
        hvdd_server_unlock(ch->s);
        if (write(ch->wake[1], "s", 1) < 0)
            (void)0;
        pthread_join(ch->thread, NULL);
    }
    while (ch->live) {
        hvdd_server_forget(ch->s, &ch->live->c);
        unlink_req(ch, ch->live);
    }
    hvdd_frames_release(&ch->in);
    hvdd_outbox_release(&ch->out);
    close(ch->wake[0]);
    close(ch->wake[1]);
    close(ch->fd);
    free(ch);
}
