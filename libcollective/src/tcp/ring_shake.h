/* The ring's handshake: every stream of the ring and its chords proves,
 * both ways, that the rank at the other end holds the job's secret (the
 * job token), bound to the ring, the set of streams, both ranks and the
 * address that was dialled, so that neither a stranger that claims a
 * rank nor a relay that was put between two ranks is accepted. Every
 * connection of a round is handled at once, outgoing and incoming, so a
 * silent or garbage connection costs nothing but a slot. Private to tcp/.
 *
 *   dialler -> listener  hello      "HVR1" rank_c rank_s Nc[16]       28 B
 *   listener -> dialler  challenge  "HVR1" rank_s Ns[16] MAC_s[32]    56 B
 *   dialler -> listener  proof      MAC_c[32]                         32 B
 *
 * MAC_x = HMAC-SHA256(secret, x | "hvdrun-ring-1" | prefix | tag |
 *                     rank_c | rank_s | Nc | Ns | address), x = 'S', 'C';
 * ranks as 4 bytes big-endian, strings with their NUL; address is the
 * listener's "ADDRESS PORT" as it published it (for the dialler: as it
 * read it from hvdd's store and dialled it). */
#ifndef COLL_RING_SHAKE_H
#define COLL_RING_SHAKE_H

#include <stddef.h>

#include "tcp_ring.h"

/* A stream this rank dials: to rank `peer` at addr ("ADDRESS PORT"). */
typedef struct shake_out {
    int peer;
    char addr[96];
    int *fd;    /* the stream, once proven */
    char *name; /* "rank 3 (10.0.0.2 41234)", for errors */
    size_t namelen;
} shake_out;

/* One round: this rank's listener (published as addr) and what it
 * dials; it accepts until `accepts` callers that wanted() admits have
 * proven themselves; each lands in *slot(arg, rank). */
typedef struct shake_round {
    const tcp_ring *g;
    const char *secret; /* the job token */
    const char *tag;    /* "" for the ring, "-chordsN" for a chord set */
    int listener;
    const char *addr; /* the listener's "ADDRESS PORT" */
    shake_out *out;
    int nout;
    int accepts;
    int (*wanted)(void *arg, int rank); /* a rank this round may accept */
    int *(*slot)(void *arg, int rank);  /* where its stream goes */
    void *arg;
    int deadline_ms; /* for the whole round */
    int loopback;    /* the interface is loopback (ring_buffer_options) */
} shake_round;

/* Socket settings of the ring's streams (ring_connect.c): buffers before
 * connect and listen, no delay and non-blocking once connected. */
void ring_buffer_options(int fd, int loopback);
void ring_stream_options(int fd);

/* Runs the round. 0, or COLL_ETRANSPORT with err set ("what: connecting
 * the TCP ring: ..."), naming the rank that failed and why. */
int shake_run(const shake_round *r, const char *what, char *err, size_t errlen);

#endif
