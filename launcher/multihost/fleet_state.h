/* The fleet's state, shared by its event loop (fleet.c) and its elastic
 * rounds (elastic.c); private to launcher/multihost. */
#ifndef HVD_FLEET_STATE_H
#define HVD_FLEET_STATE_H

#include <limits.h>
#include <jansson.h>
#include <signal.h>

#include "agent_link.h"
#include "discovery.h"
#include "fleet.h"
#include "hvdd_chan.h"
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
    int ranks;           /* its ranks in the plan, then in the round */
    /* elastic hosts that come and go (elastic_hosts.c) */
    int slots;      /* the slots it offers (-H, or the discovery) */
    int listed;     /* the discovery lists it (always, without one) */
    int joining;    /* its agent starts mid-job, to join a round */
    double join_by; /* then: when it gives up on it */
    int fails;      /* times it failed: its cooldowns grow */
    double back_at; /* blacklisted until then (0: not) */
    char iface[64], addr[64];
    char error[900]; /* "step: reason" of its first failure */
    line_buf lines[2];
    unsigned gen; /* its agent's number: a relay answer goes to that one */
} host_run;

/* An elastic job's rounds (elastic.c). */
typedef struct fleet_elastic {
    int on; /* --min-np or --max-np */
    long min_np, max_np;
    long reset_limit;          /* < 0: none */
    double timeout;            /* --elastic-timeout */
    int resets;                /* rounds started after failures */
    double short_since;        /* fewer than min_np ranks since then, or 0 */
    int gave_up_code;          /* the job's code once it cannot go on, or 0 */
    int first_code;            /* the first failed rank's code */
    double cool_min, cool_max; /* --blacklist-cooldown-range */
    int growing;               /* hosts may join (not under srun) */
    int discovering;           /* --host-discovery-script */
    discovery disc;
    int disc_failing; /* its last run failed (said once) */
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
    int links_begun;         /* hvdrun_links_begin succeeded */
    struct srun_step *step;  /* --launcher slurm: every node's agent */
    struct relay *relay;     /* the agents' calls to hvdd (relay.h) */
    unsigned agents_started; /* each agent's number: its host's gen */
    progress progress;       /* the start's line on a terminal */
    char aborted[600];
    char events[4608]; /* hvdd's lines, until their newline */
    size_t events_len;
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
/* Appends "name:n" (n < 0: "name") to a comma-separated list of *at
 * bytes in a buffer of size. */
void fleet_list_add(char *list, size_t size, size_t *at, const char *name,
                    int n);
/* The hosts that go on, "a:2,c:2" in their order, at most --max-np
 * ranks; their names "a,c" into names; returns the ranks. */
int fleet_elastic_remaining(const fleet *j, char *spec, size_t size,
                            char *names, size_t nsize);
/* Starts hvdd's next round (elastic.c): the hosts that go on (spec, cut
 * to their running workers) and new workers on the hosts of add ("x:2",
 * or NULL); at least --min-np ranks. Its size; 0 when too few (*workers:
 * how many would go on); -1 after giving up (said). The round's number
 * into *round, its hosts in rank order ("a:2,x:2") into hosts (NULL:
 * not wanted). */
int fleet_elastic_round(fleet *j, const char *spec, const char *add,
                        int *workers, int *round, char *hosts, size_t hsize);
/* hvdd's answer to a round: each host's ranks, and each agent told the
 * new rank of each of its workers. */
void fleet_elastic_took_round(fleet *j, json_t *ranks);

/* Hosts that come and go (elastic_hosts.c): set up (spares of the plan,
 * the discovery), and each turn of the loop once the job runs: the
 * discovery's news, hosts back from their cooldown, joins. */
int fleet_hosts_init(fleet *j);
void fleet_hosts_release(fleet *j);
void fleet_hosts_turn(fleet *j);
/* A host failed: blacklisted for its next cooldown (said). */
void fleet_hosts_blacklist(fleet *j, host_run *h);
/* A joining host's agent is ready, or failed (why), or ended. */
void fleet_hosts_ready(fleet *j, host_run *h);
void fleet_hosts_join_failed(fleet *j, host_run *h, const char *why);
/* Descriptors of the discovery's run, for poll; -1 for none. */
int fleet_hosts_fd(const fleet *j, int which);
/* A host by name, added at the end when new (-1: out of memory). */
int fleet_host_index(fleet *j, const char *name, int slots);
/* Starts a host's agent (fleet.c). */
void fleet_start_host(fleet *j, int i);

#endif
