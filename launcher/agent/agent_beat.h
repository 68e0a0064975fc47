/* The agent's heartbeats to hvdd (POST /v1/agent/heartbeat), so that
 * hvdd can stop the job naming a host whose agent hangs or is cut off;
 * and its exit (POST /v1/agent/exit) once its workers are done. */
#ifndef HVD_AGENT_BEAT_H
#define HVD_AGENT_BEAT_H

#include <pthread.h>

#include "agent_brief.h"
#include "hvdd_client.h"

typedef struct agent_beat {
    hvdd_client *c;
    char host[300];
    double every; /* seconds; 0: no heartbeats */
    int stop, running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
} agent_beat;

/* Starts beating every j->heartbeat seconds (nothing when 0). */
void agent_beat_start(agent_beat *b, const hvdrun_brief *j);
/* Stops the beats and tells hvdd that this host's work is over. */
void agent_beat_stop(agent_beat *b);

#endif
