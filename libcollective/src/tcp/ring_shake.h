/* The ring's handshake: every stream of the ring and its chords proves,
 * both ways, that the rank at the other end holds the job's secret (the
 * job token), bound to the ring, the set of streams, both ranks and the
 * address that was dialled, so that neither a stranger that claims a
 * rank nor a relay that was put between two ranks is accepted. Every
 * connection of a round is handled at once, outgoing and incoming, so a
 * silent or garbage connection costs nothing but a slot. Private to tcp/.
 *
 * The listener publishes "ADDRESS PORT Ns" in hvdd's store, Ns a fresh
 * random nonce of its own (16 bytes, hex); the dialler reads it there.
 *
 *   dialler -> listener  hello   "HVR2" rank_c rank_s Nc[16] MAC_c[32]  60 B
 *   listener -> dialler  answer  "HVR2" MAC_s[32]                       36 B
 *
 * MAC_x = HMAC-SHA256(secret, x | "hvdrun-ring-2" | prefix | tag |
 *                     rank_c | rank_s | Nc | Ns | address), x = 'C', 'S';
 * ranks as 4 bytes big-endian, strings with their NUL; address is the
 * listener's "ADDRESS PORT" as it published it (for the dialler: as it
 * read it from the store and dialled it). The listener takes a stream
 * once its hello checks out (Ns makes it fresh, the address makes a
 * relay's useless: the relay is not where the dialler meant to go); the
 * dialler once the answer does (Nc makes it fresh). One message each way,
 * so no end waits on the other twice. */
#ifndef COLL_RING_SHAKE_H
#define COLL_RING_SHAKE_H

#include <stdarg.h>
#include <stddef.h>

#include "tcp_ring.h"

#define SHAKE_NONCE 16

/* A stream this rank dials: to rank `peer` at addr ("ADDRESS PORT"),
 * whose listener published the nonce ns. */
typedef struct shake_out {
    int peer;
    char addr[96];
    unsigned char ns[SHAKE_NONCE];
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
    const char *addr;        /* the listener's "ADDRESS PORT" */
    const unsigned char *ns; /* and the nonce it published */
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

/* Writes "what: connecting the TCP ring: " and fmt's text to err;
 * returns COLL_ETRANSPORT. */
int ring_setup_failed(char *err, size_t errlen, const char *what,
                      const char *fmt, va_list ap);

/* Runs the round. 0, or COLL_ETRANSPORT with err set ("what: connecting
 * the TCP ring: ..."), naming the rank that failed and why. */
int shake_run(const shake_round *r, const char *what, char *err, size_t errlen);

#endif
