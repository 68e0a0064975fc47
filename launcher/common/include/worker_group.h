/* Running the plan's ranks on this host and waiting for them: the event
 * loop that relays output, notices the first failure, stops the rest, and
 * decides hvdrun's exit code. */
#ifndef HVD_WORKER_GROUP_H
#define HVD_WORKER_GROUP_H

#include <sys/types.h>

#include "hostlist.h"
#include "plan.h"

typedef struct worker_group_spec {
    char *const *argv;        /* the command */
    char *const *const *envp; /* one environment per rank */
    const cfg_plan *plan;
    const cfg_hostlist *hosts;
    double kill_grace;      /* seconds between SIGTERM and SIGKILL */
    double start_timeout;   /* seconds for every exec to happen */
    const char *output_dir; /* --output-filename, or NULL */
    int timestamps;
    int verbose;
    /* "abort REASON" (stop gracefully) and "kill" lines: from hvdd, or
     * for an agent from the launcher; EOF says that sender is gone. */
    int events_fd;
    const char *events_eof; /* why EOF on events_fd stops the job */
    /* children of this process that are not the job's (hvdd): never
     * stopped with the workers' leftovers */
    const pid_t *keep;
    int nkeep;
    /* told of each worker's end (its wait status), or NULL */
    void (*on_worker_end)(void *arg, int rank, int pid, int status);
    void *on_worker_end_arg;
    /* set to the signal that stopped the job (SIGINT, SIGTERM, SIGHUP)
     * or 0, unless NULL */
    int *interrupted;
    int first_rank; /* this host's ranks: first_rank... */
    int nranks;     /* ...nranks of them; 0: the whole plan */
    /* the guard, started ahead (taken: its fd becomes -1), or NULL to
     * start one */
    struct guard_started *guard;
} worker_group_spec;

/* Runs the job; returns hvdrun's exit code. Never returns before every
 * worker it started has been reaped. */
int worker_group_run(const worker_group_spec *spec);

#endif
