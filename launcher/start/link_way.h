/* What a way of starting agents implements (agent_link.c holds what all
 * ways share: the queue for the agent's stdin, EOFs and the exit code).
 * Private to start/. */
#ifndef HVDRUN_LINK_WAY_H
#define HVDRUN_LINK_WAY_H

#include <stddef.h>
#include <sys/types.h>

#include "agent_link.h"

typedef struct link_way {
    const char *name; /* for messages: "pipes", "ssh" */
    int remote;       /* it reaches another host */
    /* 1 once open, 0 while starting, -1 failed (step and error set). */
    int (*advance)(hvdrun_link *l);
    /* > 0 bytes, 0 at EOF (or a broken connection), -1 nothing now. */
    ssize_t (*read)(hvdrun_link *l, int stream, char *buf, size_t n);
    /* > 0 bytes written, 0 nothing now, -1 the agent is gone. */
    ssize_t (*write)(hvdrun_link *l, const char *buf, size_t n);
    /* After both EOFs: 1 with *code set, 0 to ask again. */
    int (*finish)(hvdrun_link *l, int *code);
    int (*pollfd)(const hvdrun_link *l, int stream, short *events);
    /* Optional: 1 when the link would move on now without a new event
     * on its pollfd, because another call consumed that event for it:
     * a start that advance would open (srun), or input already taken
     * off the socket (ssh). */
    int (*ready)(const hvdrun_link *l);
    int (*logging_in)(const hvdrun_link *l);
    const char *(*step)(const hvdrun_link *l);
    const char *(*error)(const hvdrun_link *l);
    const char *(*local_addr)(const hvdrun_link *l);
    void (*keepalive)(hvdrun_link *l);
    /* Frees the way's part, killing a local agent still running. */
    void (*close)(hvdrun_link *l);
} link_way;

struct hvdrun_link {
    const link_way *way;
    void *impl; /* the way's own state */
    int open;   /* the agent runs: messages can go */
    int eof[2]; /* its stdout, stderr ended */
    int done;   /* it is gone; code is its exit code */
    int code;
    char *pending; /* bytes for its stdin not yet written */
    size_t pending_len;
};

/* A link of way with impl (taken), not yet open; NULL when out of
 * memory (impl stays the caller's). */
hvdrun_link *hvdrun_link_new(const link_way *way, void *impl);

#endif
