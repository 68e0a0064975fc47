/* hvdrun-ssh's side of the agents' calls to hvdd. An agent does not load
 * an HTTP client (libcurl and its 30 libraries were most of its CPU at
 * every start): it sends each call on its stdout as a control line,
 *
 *   agent -> hvdrun  "@hvd call {"id":N,"op":"post","what":ROUTE,
 *                     "timeout":MS,"body":{...},"want":BOOL}"
 *                    (want: hvdd's answer is JSON, and wanted)
 *                    ("op":"put"|"get" with "key", and "data" or "wait",
 *                     in the store's "hvdrun" scope)
 *   hvdrun -> agent  "answer {"id":N,"code":C,"error":TEXT,
 *                     "body":{...}|"data":TEXT}"
 *
 * and hvdrun makes the call with its own hvdd client, in a thread of its
 * own (a call may wait on hvdd for a minute), C being what
 * hvdd_client.h's function returned. A post with "quiet":true gets no
 * answer once accepted (a refusal is answered as any): an agent's
 * reports (its workers' ends, its own) need not hold it up. A host's
 * quiet calls are made one after the other, in order. Only the
 * agent's routes pass; a call that is not one is answered HVDD_EINVAL without
 * reaching hvdd. The fleet's loop writes the answers: an agent's link belongs
 * to it alone. */
#ifndef HVD_RELAY_H
#define HVD_RELAY_H

typedef struct relay relay;

/* Calls go to hvdd at addr:port with token. NULL when out of memory. */
relay *relay_new(const char *addr, int port, const char *token);

/* A call (the JSON after "call ") from the agent of host, started as its
 * gen-th agent: its answer comes back through relay_take. */
void relay_call(relay *r, int host, unsigned gen, const char *json);

/* Readable while answers wait. */
int relay_fd(const relay *r);

/* The next answer: 1 with its host, gen and line ("answer {...}\n",
 * malloc'd: the caller frees it), 0 when none waits. */
int relay_take(relay *r, int *host, unsigned *gen, char **line);

/* Waits up to ms for every quiet call to be made (before what hvdd knows
 * is read: the job's summary). 0, or -1 when some are still out. */
int relay_settle(relay *r, int ms);

/* No more answers are wanted: calls still running end by themselves (at
 * hvdd's answer, or its end), and the relay is freed after the last.
 * NULL accepted. */
void relay_close(relay *r);

#endif
