/* The agent's end of hvdrun's relay (relay.h): hvdd_client.h's calls,
 * made for it by hvdrun-ssh, so that the agent loads no HTTP client.
 * agent_relay.c implements hvdd_client_new, _free, _error, _post, _put
 * and _get (the put and get in the store's "hvdrun" scope, of text);
 * agent_stdin.c takes the answers out of the agent's stdin. */
#ifndef HVD_AGENT_RELAY_H
#define HVD_AGENT_RELAY_H

#include <jansson.h>
#include <stddef.h>

#include "hvdd_client.h"

/* The prefix of an answer line on stdin. */
#define AGENT_RELAY_ANSWER "answer "

/* An answer's JSON (after the prefix): wakes the call it answers. */
void agent_relay_answer(const char *json);
/* stdin ended (hvdrun is gone): every call fails, now and later. */
void agent_relay_gone(void);

/* A post that wants no answer (a report: a worker's end, the agent's
 * own; hvdrun takes no other quiet), body taken: it goes at once and the
 * caller goes on. hvdrun sends it on hvdd's channel at once, and hvdd
 * takes the channel in order: the reports are in before the launcher
 * reads the job's end from hvdd. timeout_ms and deadline are not used
 * by hvdrun's relay (kept for the call's line). */
void agent_relay_tell(const char *what, json_t *body, long timeout_ms,
                      double deadline);

/* hvdd_client.h's post, put and get in two halves: a call goes out at
 * its _begin and is waited for at its _end, so that calls that do not
 * need each other's answers wait together (an agent's NIC choice: its
 * registration with its targets, its probes with the decision). _end
 * returns what the whole call returns (HVDD_ENOMEM for a NULL call) and
 * frees the call; _drop frees one not waited for (its answer is dropped
 * when it comes). The put and get are the "hvdrun" scope's. */
typedef struct agent_call agent_call;
agent_call *agent_post_begin(hvdd_client *c, const char *what, json_t *body,
                             long timeout_ms, int want);
int agent_post_end(hvdd_client *c, agent_call *k, json_t **answer);
agent_call *agent_put_begin(hvdd_client *c, const char *key, const char *data,
                            size_t len);
int agent_put_end(hvdd_client *c, agent_call *k);
agent_call *agent_get_begin(hvdd_client *c, const char *key, int wait_ms);
int agent_get_end(hvdd_client *c, agent_call *k, char **data, size_t *len);
void agent_call_drop(agent_call *k);

/* From now on fd 0 is a pipe that a thread fills from the real stdin,
 * less the answers, which it hands to agent_relay_answer; at the real
 * stdin's EOF the pipe ends too, after agent_relay_gone. 0, or -1 with
 * errno. */
int agent_stdin_start(void);

#endif
