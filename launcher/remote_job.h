/* A job on several hosts: one agent per host (over SSH, or a child
 * process for the launch host's own slots), started in parallel; no
 * worker starts anywhere until every agent is ready; the first failure
 * stops every host. */
#ifndef HVD_REMOTE_JOB_H
#define HVD_REMOTE_JOB_H

#include "envlist.h"
#include "settings.h"

typedef struct remote_job_spec {
    settings *s;
    const envlist *base; /* what every worker gets besides its identity */
    const char *token;
    int rendezvous_port;
    const char *rendezvous_addr; /* --rendezvous-addr, or NULL */
    double heartbeat;
    int events_fd;  /* hvdd's "abort REASON" lines, or -1 */
    int check_only; /* --check-ssh: log in and run the agent's self-test */
} remote_job_spec;

/* Returns hvdrun's exit code. */
int remote_job_run(const remote_job_spec *spec);

#endif
