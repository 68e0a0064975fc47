/* The launcher's own way into hvdd: one end of a unix socketpair that
 * hvdrun makes when it starts hvdd (hvdd's --channel-fd). It carries
 * hvdd's API, every route as over HTTP, with no TCP connection, no HTTP
 * and no thread per call: hvdrun-ssh makes the agents' calls (relay.h),
 * the elastic rounds and the summary's status over it. Whoever holds
 * the other end is the job's launcher: a request counts as one with the
 * job token, from loopback.
 *
 *   request  "ID METHOD WAIT PATHLEN BODYLEN\n" PATH BODY
 *   answer   "ID STATUS BODYLEN\n" BODY
 *
 * ID 0 asks for no answer (a report). WAIT is ?wait=ms's value (0:
 * none). hvdd takes requests in the order they come; one it holds (a
 * long-poll, a barrier) answers once released, and the rest go on
 * meanwhile, so answers may come in another order than their requests.
 * This header also has the frames' reading, which both ends use. */
#ifndef HVDD_CHAN_H
#define HVDD_CHAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hvdd_client.h" /* the codes (HVDD_E...) */

#define HVDD_CHAN_MAX_LINE 128
#define HVDD_CHAN_MAX_PATH 2048
/* A body at most: hvdd's own limit over HTTP (1 MiB + 4 KiB) */
#define HVDD_CHAN_MAX_BODY ((1u << 20) + 4096)

/* What has come in on one end: p[off..len) is not yet taken. */
typedef struct hvdd_frames {
    char *p;
    size_t off, len, cap;
} hvdd_frames;

/* Reads what fd has now, without blocking: bytes read, 0 at EOF, -1 with
 * errno (EAGAIN: nothing yet). At most max bytes are buffered. */
ssize_t hvdd_frames_read(hvdd_frames *f, int fd, size_t max);

/* A frame's header: its words (the line cut at its spaces). */
typedef struct hvdd_frame {
    char line[HVDD_CHAN_MAX_LINE]; /* its words, each NUL-ended */
    char *word[8];
    size_t len[2];       /* the lengths its last words give */
    const char *payload; /* the bytes after the line: len[0] + len[1] */
    size_t bytes;        /* of the whole frame, line included */
} hvdd_frame;

/* The first whole frame, if its header has exactly nwords words of which
 * the last nlens (1 or 2) are the lengths of what follows (decimal
 * digits, together at most max): 1 with it in *fr (use it, then call
 * hvdd_frames_drop); 0 while incomplete; -1 when the header is not one. */
int hvdd_frames_next(hvdd_frames *f, int nwords, int nlens, size_t max,
                     hvdd_frame *fr);
void hvdd_frames_drop(hvdd_frames *f, const hvdd_frame *fr);
void hvdd_frames_release(hvdd_frames *f);

/* What one end has yet to write: both write only what the socket takes
 * now, and queue the rest. */
typedef struct hvdd_outbox {
    char *p;
    size_t len, cap;
} hvdd_outbox;

/* Queues n bytes: 0, or -1 when out of memory (nothing queued). */
int hvdd_outbox_add(hvdd_outbox *o, const void *p, size_t n);
/* Writes what fd takes now, never blocking (MSG_NOSIGNAL: a gone peer is
 * an error, not a SIGPIPE): 0, or -1 once the other end is gone. */
int hvdd_outbox_flush(hvdd_outbox *o, int fd);
void hvdd_outbox_release(hvdd_outbox *o);

typedef struct hvdd_chan hvdd_chan;

typedef struct hvdd_chan_answer {
    uint64_t id;
    int status; /* HTTP's meaning */
    char *body; /* malloc'd, NUL-ended past len: the caller frees it */
    size_t len;
} hvdd_chan_answer;

/* Takes fd (the launcher's end, made non-blocking). NULL when out of
 * memory (fd closed). */
hvdd_chan *hvdd_chan_new(int fd);
/* Closes the end; hvdd goes on serving HTTP. NULL accepted. */
void hvdd_chan_free(hvdd_chan *ch);
/* What to poll: the descriptor, and in *events POLLIN, with POLLOUT while
 * requests wait to be written; -1 once hvdd is gone (nothing to wait
 * for: hvdd_chan_take says so at once). */
int hvdd_chan_fd(const hvdd_chan *ch, short *events);
/* A fresh id (never 0). */
uint64_t hvdd_chan_next_id(hvdd_chan *ch);

/* Queues one request and writes what the socket takes now (never
 * blocking: hvdd may itself wait on the launcher, for its stdout to be
 * read): 0, HVDD_EINVAL (a path or body too long), HVDD_ENOMEM (too much
 * waits unwritten: hvdd takes nothing), or HVDD_ECONNECT once hvdd's end
 * is gone. */
int hvdd_chan_send(hvdd_chan *ch, uint64_t id, const char *method,
                   const char *path, long wait_ms, const void *body,
                   size_t len);

/* Writes what waits and reads what came, never blocking, and gives the
 * next answer: 1 (the caller frees a->body), 0 when none waits, -1 once
 * hvdd is gone (its end closed, or a frame that is not one) and no
 * answer will come. */
int hvdd_chan_take(hvdd_chan *ch, hvdd_chan_answer *a);

/* 1 when hvdd_chan_take has an answer without reading (one kept by
 * hvdd_chan_call, or read with its own), else 0: the descriptor may then
 * be silent while an answer waits. */
int hvdd_chan_pending(const hvdd_chan *ch);

/* One request and its answer, waited for up to timeout_ms: 0, or
 * HVDD_ETIMEOUT, HVDD_ECONNECT, HVDD_ENOMEM. Answers to other requests
 * that come meanwhile stay for hvdd_chan_take. */
int hvdd_chan_call(hvdd_chan *ch, const char *method, const char *path,
                   long wait_ms, const void *body, size_t len, long timeout_ms,
                   hvdd_chan_answer *a);

/* hvdd_client.h's code for an answer of hvdd's (0 for 200), the reason
 * in err: "WHAT: REASON". The HTTP client maps its answers with it too. */
int hvdd_answer_code(int status, const char *body, size_t len, const char *what,
                     char *err, size_t errlen);

/* POSTs j (taken; NULL only when out of memory) to /v1/<what>; with
 * answer, hvdd's JSON answer goes there (the caller decrefs it). Codes as
 * hvdd_client_post's, the reason in err. */
int hvdd_chan_post(hvdd_chan *ch, const char *what, json_t *j, long timeout_ms,
                   json_t **answer, char *err, size_t errlen);

#endif
