/* The handshake of a connection from an agent that srun started back to
 * hvdrun. Both sides prove they hold the job's secret, bound to fresh
 * nonces of both, the node and the stream, so that neither a stranger
 * dialling hvdrun's port nor a stranger's listener that an agent reached
 * by mistake gets anywhere:
 *
 *   hvdrun -> agent   "HVDS1 SNONCE\n"
 *   agent  -> hvdrun  "NODE STREAM CNONCE MAC_A\n"
 *   hvdrun -> agent   "MAC_H\n"
 *   MAC_x = HMAC-SHA256(secret, "hvdrun-srun-1" x NODE STREAM WHERE
 *                       SNONCE CNONCE)
 *
 * WHERE is "ADDRESS PORT" of hvdrun's end as each side sees it (the
 * agent's peer, hvdrun's own address): a stranger's listener that relays
 * the handshake to hvdrun from elsewhere is refused. Nonces are 16 random
 * bytes and MACs 32, both in hex. */
#ifndef HVD_SRUN_AUTH_H
#define HVD_SRUN_AUTH_H

#include <stddef.h>

#define SRUN_AUTH_LINE 512 /* longer than any line of the handshake */
#define SRUN_AUTH_NONCE 33 /* hex and its NUL */

/* hvdrun: a fresh nonce and the hello line to send. 0, or -1 without
 * random bytes. */
int srun_auth_hello(char nonce[SRUN_AUTH_NONCE], char *line, size_t n);

/* The agent: from hvdrun's hello, the answer to send and the proof that
 * hvdrun must send back (hex). 0, or -1 for a hello that is not one. */
int srun_auth_answer(const char *secret, const char *hello, const char *node,
                     int stream, const char *where, char *answer, size_t n,
                     char expect[65]);

/* hvdrun: checks an answer to the hello of nonce; on success fills node
 * (at most nodelen - 1 characters) and stream, and the proof line to send
 * back. 0, or -1 when the answer is malformed or its MAC wrong. */
int srun_auth_check(const char *secret, const char *nonce, const char *where,
                    const char *answer, char *node, size_t nodelen, int *stream,
                    char *proof, size_t n);

/* "ADDRESS PORT" of hvdrun's end of a connection: the socket's peer (the
 * agent, peer = 1) or its own address (hvdrun, peer = 0). 0 or -1. */
int srun_auth_where(int fd, int peer, char *out, size_t n);

/* Compares two MACs in constant time: 1 when equal. */
int srun_auth_equal(const char *a, const char *b);

#endif
