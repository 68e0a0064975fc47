/* The agent's end of hvdrun's relay (relay.h): hvdd_client.h's calls,
 * made for it by hvdrun-ssh, so that the agent loads no HTTP client.
 * agent_relay.c implements hvdd_client_new, _free, _error, _post, _put
 * and _get (the put and get in the store's "hvdrun" scope, of text);
 * agent_stdin.c takes the answers out of the agent's stdin. */
#ifndef HVD_AGENT_RELAY_H
#define HVD_AGENT_RELAY_H

/* The prefix of an answer line on stdin. */
#define AGENT_RELAY_ANSWER "answer "

/* An answer's JSON (after the prefix): wakes the call it answers. */
void agent_relay_answer(const char *json);
/* stdin ended (hvdrun is gone): every call fails, now and later. */
void agent_relay_gone(void);

/* From now on fd 0 is a pipe that a thread fills from the real stdin,
 * less the answers, which it hands to agent_relay_answer; at the real
 * stdin's EOF the pipe ends too, after agent_relay_gone. 0, or -1 with
 * errno. */
int agent_stdin_start(void);

#endif
