/* Telling hvdd this rank is alive: registration at coll_init, heartbeats
 * from a small thread when hvdrun asks for them (HVDD_HEARTBEAT_SECONDS,
 * set from --heartbeat-timeout), and the exit at coll_finalize, so that a
 * rank that stops answering (hung, stopped, killed) stops the job with
 * its name, and a finished one does not. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "hvd_clock.h"

struct heartbeat {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t stop_cv;
    int stop;
    double interval;
    hvdd_client *client; /* its own: a client serves one thread */
    int rank;
};

static void *
beat_main(void *arg)
{
    struct heartbeat *h = arg;

    pthread_mutex_lock(&h->mu);
    while (!h->stop) {
        struct timespec ts = hvd_clock_after(CLOCK_REALTIME, h->interval);
        pthread_cond_timedwait(&h->stop_cv, &h->mu, &ts);
        if (h->stop)
            break;
        pthread_mutex_unlock(&h->mu);
        hvdd_client_heartbeat(h->client, h->rank); /* errors: hvdd decides */
        pthread_mutex_lock(&h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

int
comm_register(coll_comm *c, const char *addr, int port, const char *token)
{
    const char *host = getenv("HOROVOD_HOSTNAME"), *beat;
    struct heartbeat *h;
    hvdd_identity id;
    double interval;
    char *end;

    if (token == NULL || host == NULL)
        return 0; /* not under hvdrun: nobody to tell */
    if (c->registered) {
        /* (a joining worker registered before it connected) */
    } else if (hvdd_client_register(c->client, host, (int)getpid(), c->rank,
                                    &id)) {
        return comm_fail(c, COLL_ERENDEZVOUS, "register with hvdd: %s",
                         hvdd_client_error(c->client));
    } else {
        c->registered = 1;
        c->fresh = id.fresh; /* (a new worker of an elastic round) */
    }
    beat = getenv("HVDD_HEARTBEAT_SECONDS");
    interval = beat ? strtod(beat, &end) : 0;
    if (beat == NULL || *end || interval <= 0)
        return 0;
    if ((h = calloc(1, sizeof(*h))) == NULL ||
        (h->client = hvdd_client_new(addr, port, token, 5.0)) == NULL) {
        free(h);
        return comm_fail(c, COLL_ENOMEM, "out of memory");
    }
    if (c->elastic) /* beats of an old round are refused, not misread */
        hvdd_client_set_round(h->client, c->round);
    h->interval = interval;
    h->rank = c->rank;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->stop_cv, NULL);
    if (pthread_create(&h->thread, NULL, beat_main, h) != 0) {
        hvdd_client_free(h->client);
        free(h);
        return comm_fail(c, COLL_ENOMEM, "cannot start the heartbeat thread");
    }
    c->heartbeat = h;
    return 0;
}

void
comm_stop_heartbeat(coll_comm *c)
{
    struct heartbeat *h = c->heartbeat;

    if (h) {
        pthread_mutex_lock(&h->mu);
        h->stop = 1;
        pthread_cond_signal(&h->stop_cv);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->thread, NULL);
        hvdd_client_free(h->client);
        pthread_cond_destroy(&h->stop_cv);
        pthread_mutex_destroy(&h->mu);
        free(h);
        c->heartbeat = NULL;
    }
}

void
comm_unregister(coll_comm *c)
{
    comm_stop_heartbeat(c);
    /* a finished rank must not be taken for a lost one */
    if (c->registered && c->client)
        hvdd_client_exit(c->client, c->rank, 0);
    c->registered = 0;
}
