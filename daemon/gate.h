/* Who gets into hvdd, connection by connection, before libmicrohttpd sees
 * them: a cap on connections in all (below what libmicrohttpd 0.9.75
 * deadlocks at), a cap per client address, and a deadline for each
 * request's headers, so that neither a flood nor a slowloris from a few
 * addresses keeps the job's own clients out. Connections are known by
 * their descriptor from accept to close. Thread-safe. */
#ifndef HVDD_GATE_H
#define HVDD_GATE_H

#include <stddef.h>
#include <stdint.h>

typedef struct hvdd_gate hvdd_gate;

/* cap: connections at once; per_addr: of them from one address;
 * header_s: seconds a connection has to finish a request's headers,
 * from its accept or from its previous response; nfds: the descriptor
 * numbers it may be given (the descriptor limit). NULL when out of
 * memory. Free with hvdd_gate_free (NULL accepted). */
hvdd_gate *hvdd_gate_new(unsigned cap, unsigned per_addr, double header_s,
                         int nfds);
void hvdd_gate_free(hvdd_gate *g);

/* A connection accepted on fd from addr: 1 when it may come in (it is
 * counted until hvdd_gate_closed), 0 when a cap is reached (the caller
 * closes it). */
int hvdd_gate_admit(hvdd_gate *g, int fd, const char *addr, double now);
/* fd never reached libmicrohttpd, or it refused fd (and closed it):
 * forget it. */
void hvdd_gate_drop(hvdd_gate *g, int fd);
/* libmicrohttpd took fd: what to give hvdd_gate_closed when it is done
 * with it. */
uintptr_t hvdd_gate_started(hvdd_gate *g, int fd);
void hvdd_gate_closed(hvdd_gate *g, uintptr_t ticket);
/* The request on fd has all its headers / its response went: the next
 * request's deadline runs from now. */
void hvdd_gate_headers_in(hvdd_gate *g, int fd);
void hvdd_gate_request_done(hvdd_gate *g, int fd, double now);
/* Shuts down (libmicrohttpd then closes them) the connections whose
 * deadline passed; returns how many. */
int hvdd_gate_expire(hvdd_gate *g, double now);
/* Connections counted now, in all and from addr. */
unsigned hvdd_gate_count(hvdd_gate *g, const char *addr);

#endif
