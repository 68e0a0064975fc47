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
 * and hvdrun makes the call as a request on hvdd's channel (hvdd_chan.h),
 * C being what hvdd_client.h's function would have returned. A report
 * (a post to "exit" or "agent/exit") with "quiet":true gets no answer once
 * sent (a refusal is answered as any): an agent's reports (its workers'
 * ends, its own) need not hold it up, and hvdd takes the channel's
 * requests in order, so they are in before any later call of the
 * launcher's (the summary's). Only the agent's routes pass; a call that
 * is not one is answered HVDD_EINVAL without reaching hvdd. One thread,
 * the fleet's loop, calls everything here. */
#ifndef HVD_RELAY_H
#define HVD_RELAY_H

struct hvdd_chan;

typedef struct relay relay;

/* Calls go over ch (the caller's, kept until relay_free). NULL when out
 * of memory. */
relay *relay_new(struct hvdd_chan *ch);

/* A call (the JSON after "call ") from the agent of host, started as its
 * gen-th agent: its answer comes back through relay_take. */
void relay_call(relay *r, int host, unsigned gen, const char *json);

/* What to poll for hvdd's answers (and, in *events, for the requests
 * not yet written); -1 once hvdd is gone. */
int relay_fd(const relay *r, short *events);

/* 1 when relay_take has an answer although relay_fd may be silent (a
 * refusal made here, an answer already read). */
int relay_ready(const relay *r);

/* The next answer: 1 with its host, gen and line ("answer {...}\n",
 * malloc'd: the caller frees it), 0 when none waits. Calls past their
 * timeout are answered HVDD_ETIMEOUT here, every call HVDD_ECONNECT
 * once hvdd is gone. */
int relay_take(relay *r, int *host, unsigned *gen, char **line);

/* Drops the calls still waiting (hvdd's answers to them are not read).
 * NULL accepted. */
void relay_free(relay *r);

#endif
