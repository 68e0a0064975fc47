/* The fleet's state, shared by its event loop (fleet.c) and its elastic
 * rounds (elastic.c); private to launcher/multihost. */
#ifndef HVD_FLEET_STATE_H
#define HVD_FLEET_STATE_H

#include <limits.h>
#include <signal.h>

#include "agent_link.h"
#include "fleet.h"
#include "hvdd_client.h"
#include "output.h"
#include "progress.h"

#define LINE_LIMIT 65536

typedef struct line_buf {
    char *p;
    size_t len, cap;
} line_buf;

typedef struct host_run {
    const char *name;
    hvdrun_link *link;   /* once started, until dropped */
    int started;         /* connecting (SSH) or spawned (local) */
    int remote;          /* started over SSH */
    int code;            /* its agent's exit code, once it ended */
    int ready;           /* "@hvd ready" came */
    int over;            /* finished, or dropped */
    int out;             /* elastic: failed, no longer in the job */
    double out_deadline; /* then: when its agent is dropped */
    int ranks;           /* its ranks in the plan */
    char iface[64], addr[64];
    char error[900]; /* "step: reason" of its first failure */
    line_buf lines[2];
} host_run;

/* An elastic job's rounds (elastic.c). */
typedef struct fleet_elastic {
    int on; /* --min-np or --max-np */
    long min_np, max_np;
    long reset_limit;   /* < 0: none */
    double timeout;     /* --elastic-timeout */
    int resets;         /* rounds started after failures */
    double short_since; /* fewer than min_np ranks since then, or 0 */
    int gave_up_code;   /* the job's code once it cannot go on, or 0 */
    int first_code;     /* the first failed rank's code */
    hvdd_client *hvdd;
} fleet_elastic;

typedef struct fleet {
    const fleet_spec *spec;
    settings *s;
    host_run *h;
    int n;
    out_sink sinks[2];
    int sigfd, events_fd;
    sigset_t old_mask;
    int go_sent, stopping;
    double start_deadline, stop_deadline;
    int failed;       /* the host whose agent failed first, or -1 */
    int start_failed; /* a host failed before "go" */
    int interrupted;
    int links_begun;        /* hvdrun_links_begin succeeded */
    struct srun_step *step; /* --launcher slurm: every node's agent */
    progress progress;      /* the start's line on a terminal */
    char aborted[600];
    char user[256];
    char known_hosts[PATH_MAX];
    int accept_new;
    char command[PATH_MAX + 64];    /* what SSH runs on each host */
    char agent_path[PATH_MAX + 16]; /* this host's agent binary */
    fleet_elastic el;
} fleet;

/* Stops every host (their agents stop their workers). */
void fleet_stop_all(fleet *j, const char *why);
/* When agents told to stop now are given up on: the kill grace their
 * workers get, and 5 s. */
double fleet_stop_deadline(const fleet *j);
/* Sends a control line to one host's agent, if it runs. */
void fleet_tell(host_run *h, const char *line);

/* Elastic jobs (elastic.c): set up from the settings (0, or -1 when hvdd
 * cannot be reached); a rank of host h failed with code (the job goes on
 * without h if it can); the timers, at every turn of the loop. */
int fleet_elastic_init(fleet *j);
void fleet_elastic_release(fleet *j);
void fleet_elastic_host_failed(fleet *j, host_run *h, int rank, int code);
void fleet_elastic_check(fleet *j);
/* The code an elastic job that cannot go on exits with: the first
 * failed rank's. */
int fleet_elastic_code(const fleet *j);

#endif
