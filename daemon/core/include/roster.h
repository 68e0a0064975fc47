/* The job as hvdd sees it: the plan, who has registered, heartbeats,
 * barriers, exit codes, and an abort reason. Not thread-safe: the server
 * serialises. Times are seconds on a monotonic clock. */
#ifndef HVDD_ROSTER_H
#define HVDD_ROSTER_H

#include "agents.h"
#include "hmap.h"
#include "hostlist.h"
#include "kvstore.h"
#include "plan.h"

typedef enum rank_state {
    RANK_PENDING,    /* not registered yet */
    RANK_REGISTERED, /* registered, running */
    RANK_EXITED,     /* reported its exit */
    RANK_LOST,       /* missed its heartbeats */
    RANK_KEPT        /* a worker of the last round, given this rank: not
                      * registered in this round yet */
} rank_state;

typedef struct rank_info {
    rank_state state;
    int pid;
    int exit_code;
    double last_seen;
} rank_info;

/* A worker that ended with a non-zero code, kept for the job's page and
 * summary across elastic rounds (the first HVDD_FAILURES_KEPT). */
#define HVDD_FAILURES_KEPT 32
typedef struct hvdd_failure {
    int round, rank, pid, code;
    char host[256];
} hvdd_failure;

/* A registration that arrived before the plan was known (standalone hvdd
 * without --hosts): ranks are given once all have arrived. */
typedef struct arrival {
    char host[256];
    int pid;
    int rank; /* once the plan exists */
} hvdd_arrival;

typedef struct hvdd_roster {
    int size;
    int has_plan;
    cfg_hostlist hosts;
    cfg_plan plan;
    rank_info *ranks; /* size entries once the plan exists */
    hvdd_arrival *arrivals;
    int narrivals;
    hmap arrived;  /* "host pid" -> arrival index + 1: no one twice */
    hmap barriers; /* name -> barrier */
    char abort_reason[512];
    int aborted;
    /* a warning a rank sent for the launcher's output (POST /v1/warn),
     * until the server passes it on; a newer one replaces it */
    char warning[4096];
    int warning_new;
    hvdd_failure failures[HVDD_FAILURES_KEPT];
    int nfailures;
    double heartbeat_timeout; /* 0: off */
    agents agents;            /* the NIC choice, once the plan exists */
    char iface[64];           /* the NIC of a one-host job */
    char master_addr[256];
    int master_port;
    /* elastic rounds (rounds.c): 0 is the plan hvdd started with */
    int round;
    int fresh;     /* this round has ranks for new workers */
    int job_hosts; /* hosts of round 0's plan: the hosts rounds may use */
} hvdd_roster;

/* A worker of the last round that goes on. */
typedef struct hvdd_survivor {
    const char *host;
    int pid;
} hvdd_survivor;

/* Creates a job of `size` ranks; with hosts_spec ("a:2,b:2") its plan is
 * known at once, else it is made from the registrations. Scope sizes for
 * Horovod's finalising DELETE go into kv. Errors go to err. */
int hvdd_roster_init(hvdd_roster *j, int size, const char *hosts_spec,
                     kvstore *kv, char *err, size_t errlen);
void hvdd_roster_release(hvdd_roster *j);

/* Index of a host of the plan by name, or -1. */
int hvdd_roster_host_index(const hvdd_roster *j, const char *name);

/* The interface and MASTER_ADDR a rank on host h uses: the agents' choice
 * across hosts, else the one-host settings. */
const char *hvdd_roster_iface(const hvdd_roster *j, int h);
const char *hvdd_roster_master_addr(const hvdd_roster *j);

/* Registers a worker. rank < 0 means "any free rank on this host". Returns
 * the rank (>= 0), -1 with err when refused, or -2 when the answer must
 * wait for the other workers (standalone): then *arrival says which
 * arrival to ask hvdd_roster_arrival_rank about later. */
int hvdd_roster_register(hvdd_roster *j, const char *host, int pid, int rank,
                         kvstore *kv, double now, int *arrival, char *err,
                         size_t errlen);

/* The rank given to an arrival, or -2 while the plan is incomplete. */
int hvdd_roster_arrival_rank(const hvdd_roster *j, int arrival);

/* A heartbeat from rank; -1 when there is no such registered rank. */
int hvdd_roster_heartbeat(hvdd_roster *j, int rank, double now);

/* Records rank's exit code; -2 when pid is not the worker that has the
 * rank now, or host (the reporting agent's, NULL when not said) is not
 * the rank's host: a worker of an earlier elastic round. */
int hvdd_roster_exited(hvdd_roster *j, int rank, int code, int pid,
                       const char *host);

/* Keeps a worker that ended with a non-zero code (the first
 * HVDD_FAILURES_KEPT, once per host and pid): exits of this round, and
 * late ones of a worker of an earlier round. */
void hvdd_roster_note_failure(hvdd_roster *j, int round, int rank, int pid,
                              int code, const char *host);

/* Joins barrier `name` as rank; returns 1 once all `size` ranks joined
 * this round, 0 while waiting, -1 for a bad rank. A barrier is reusable:
 * the round after completion starts empty. `round` is the round the
 * caller joined (pass the same value when asking again). */
int hvdd_roster_barrier(hvdd_roster *j, const char *name, int rank, int *round);

/* Stops the job with a reason (the first reason wins). */
void hvdd_roster_abort(hvdd_roster *j, const char *reason);

/* Declares ranks whose last heartbeat is older than the timeout lost and
 * aborts naming the first; returns 1 when it aborted. */
int hvdd_roster_check_heartbeats(hvdd_roster *j, double now);

/* Starts the next round: hosts_spec ("a:2,c:2") its hosts of this job and
 * their slots, ranks numbered in the job's host order; keep the workers
 * that go on, in the order of their old ranks, each given the first free
 * rank of its host (one whose host has none left is not in the round).
 * The other ranks wait for new workers. Barriers start again, Horovod's
 * scope sizes are the round's. 0, or -1 with err. */
int hvdd_roster_new_round(hvdd_roster *j, const char *hosts_spec,
                          const hvdd_survivor *keep, int nkeep, kvstore *kv,
                          char *err, size_t errlen);
/* Every running worker of this round (registered, or kept from the last
 * and not registered again yet), in rank order (the caller frees
 * the array; the names are the roster's, which rounds keep): the
 * launcher's "keep" when it lets hvdd say who goes on. */
hvdd_survivor *hvdd_roster_registered(const hvdd_roster *j, int *n);
/* spec ("a:2,c:2") with each host's slots cut to its running workers
 * (hosts without one left out), into out: a round of the workers that
 * run, with no rank waiting for a new one, but the ranks of a host that
 * joined whose workers are still starting (they register into the round
 * that runs, HOROVOD_ELASTIC_JOIN). Returns its ranks; -1: a bad
 * spec, or too long. */
int hvdd_roster_trim_spec(const hvdd_roster *j, const char *spec, char *out,
                          size_t size);
/* The rank worker (host, pid) has in the round after `after`: -2 while
 * that round has not started, -1 when the worker is not in it. */
int hvdd_roster_rejoin(const hvdd_roster *j, const char *host, int pid,
                       int after);
/* A host joins the job (elastic growth): a new name gets the next index,
 * a host that left is taken back (its agent registers again). Refused
 * before the network is chosen and for a host with ranks in this round.
 * Its index, or -1 with err. Rounds may then give it ranks. */
int hvdd_roster_add_host(hvdd_roster *j, const char *name, char *err,
                         size_t errlen);
/* What a new round resets (roster.c): the scope sizes and barriers. */
int hvdd_roster_reset_round_state(hvdd_roster *j, kvstore *kv, char *err,
                                  size_t errlen);

#endif
