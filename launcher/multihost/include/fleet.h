/* A job on several hosts: one agent per host (over SSH, or a child
 * process for the launch host's own slots), started in parallel; no
 * worker starts anywhere until every agent is ready; the first failure
 * stops every host. */
#ifndef HVD_FLEET_H
#define HVD_FLEET_H

#include "envlist.h"
#include "settings.h"

struct fleet;
struct hvdrun_link;

/* Logins over SSH: hvdrun-ssh's (fleet_ssh_libssh2, in the library
 * hvdmultihostssh, with libssh2). hvdrun itself runs Slurm jobs' fleets
 * with none, and so loads neither libssh2 nor OpenSSL. setup fills the
 * fleet's command, user and known_hosts and sets libssh2 up; open starts
 * host i's agent's link (NULL when out of memory); end undoes setup. */
typedef struct fleet_ssh {
    int (*setup)(struct fleet *j);
    struct hvdrun_link *(*open)(struct fleet *j, int i);
    void (*end)(struct fleet *j);
} fleet_ssh;

extern const fleet_ssh fleet_ssh_libssh2;

typedef struct fleet_spec {
    settings *s;
    const envlist *base; /* what every worker gets besides its identity */
    const char *token;
    struct hvdd_chan *chan; /* hvdd's channel: the agents' calls, rounds */
    const fleet_ssh *ssh;   /* NULL: no host is reached over SSH */
    int rendezvous_port;
    const char *rendezvous_addr; /* --rendezvous-addr, or NULL */
    double heartbeat;
    int events_fd;    /* hvdd's "abort REASON" lines, or -1 */
    int check_only;   /* --check-ssh: log in and run the agent's self-test */
    int *interrupted; /* set to the signal that stopped the job, or 0 */
    /* --launcher slurm: started by the caller, freed by fleet_run (while
     * the stop signals are still blocked) */
    struct srun_step *step;
    /* Called once every host's agent ended 0 with nothing gone wrong, so
     * that nothing more is asked of hvdd: it may stop while Slurm ends
     * its step (or NULL) */
    void (*hvdd_done)(void *arg);
    void *arg;
} fleet_spec;

/* Returns hvdrun's exit code. */
int fleet_run(const fleet_spec *spec);

#endif
