#include "agent_beat.h"

#include "agent_relay.h"
#include "quiet_thread.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static json_t *
host_body(const agent_beat *b)
{
    return json_pack("{ss}", "host", b->host);
}

static void *
beat(void *arg)
{
    agent_beat *b = arg;
    struct timespec at;

    pthread_mutex_lock(&b->mu);
    clock_gettime(CLOCK_REALTIME, &at);
    while (!b->stop) {
        double next = at.tv_sec + at.tv_nsec / 1e9 + b->every;
        at.tv_sec = (time_t)next;
        at.tv_nsec = (long)((next - (double)at.tv_sec) * 1e9);
        if (pthread_cond_timedwait(&b->cv, &b->mu, &at) != ETIMEDOUT)
            continue;
        pthread_mutex_unlock(&b->mu);
        /* before registration hvdd answers 409: nothing to do about it */
        hvdd_client_post(b->c, "agent/heartbeat", host_body(b), 10000, NULL);
        pthread_mutex_lock(&b->mu);
        clock_gettime(CLOCK_REALTIME, &at);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

void
agent_beat_start(agent_beat *b, const hvdrun_brief *j)
{
    memset(b, 0, sizeof(*b));
    snprintf(b->host, sizeof(b->host), "%s", j->hosts.hosts[j->host].name);
    b->every = j->heartbeat;
    b->c = hvdd_client_new(j->rendezvous_addr, j->rendezvous_port, j->token, 5);
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    if (b->c && b->every > 0)
        b->running = quiet_thread_start(&b->thread, beat, b) == 0;
}

void
agent_beat_stop(agent_beat *b)
{
    pthread_mutex_lock(&b->mu);
    b->stop = 1;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
    if (b->running)
        pthread_join(b->thread, NULL);
    if (b->c && b->every > 0) /* (no answer to wait for: a report) */
        agent_relay_tell("agent/exit", host_body(b), 10000, 5);
    hvdd_client_free(b->c);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
}
