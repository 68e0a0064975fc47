/* One srun step that starts an agent on each node of a job (hvdrun's
 * side). srun runs hvdrun-srun-agent once per node; each connects
 * back to a port of hvdrun three times (the agent's stdin and stdout,
 * its stderr, and a status line), proves it holds the job's secret
 * (srun_auth.h), and from then on is that node's agent as a pipe or an
 * SSH channel would be. The secret and the port travel in srun's
 * environment, never in argv. srun's own lines go to hvdrun's stderr. */
#ifndef HVD_SRUN_STEP_H
#define HVD_SRUN_STEP_H

#include <signal.h>
#include <stddef.h>

typedef struct srun_step srun_step;

typedef struct srun_step_spec {
    char *const *nodes; /* the nodes' Slurm names, in the job's order */
    size_t n;
    int whole_allocation; /* every node of the allocation: no --nodelist */
    const char *hvdrun;   /* the hvdrun the nodes run */
    /* what srun runs on each node: hvdrun-srun-agent's path, beside this
     * hvdrun's; NULL: `HVDRUN --agent-srun` (--remote-hvdrun, whose
     * siblings only the nodes know) */
    const char *agent;
    const char *gres;   /* the step's gres (srun_gres_arg), or NULL */
    const char *secret; /* the step's own, made fresh */
    const sigset_t *unblock;
} srun_step_spec;

enum { SRUN_STDIO, SRUN_STDERR, SRUN_STATUS, SRUN_STREAMS };

/* Listens and starts srun. NULL with a reason in err on failure. */
srun_step *srun_step_start(const srun_step_spec *spec, char *err,
                           size_t errlen);
/* Ends a step nobody will go on with: srun is told to stop (SIGTERM),
 * waited for, and the step freed. NULL accepted. */
void srun_step_forget(srun_step *st);
/* srun's argv for a spec, for --dry-run (one line, into out). */
void srun_step_describe(const srun_step_spec *spec, char *out, size_t n);

/* Does what can be done without blocking: takes connections and their
 * handshakes, relays srun's lines, notes srun's end. */
void srun_step_poll(srun_step *st);
/* An fd that is readable whenever srun_step_poll has something to do. */
int srun_step_pollfd(const srun_step *st);
/* Node i's connection for stream, once it arrived; else -1. */
int srun_step_fd(const srun_step *st, size_t node, int stream);
/* This host's address as node i reached it ("" before it did). */
const char *srun_step_local_addr(const srun_step *st, size_t node);
/* 1 once srun has ended; its exit code (128+N for signal N). */
int srun_step_done(const srun_step *st);
int srun_step_code(const srun_step *st);
/* srun's last line ("" if none), and whether it said the step or job
 * was cancelled. */
const char *srun_step_last_line(const srun_step *st);
int srun_step_cancelled(const srun_step *st);

/* Calls before(arg) ahead of every line the step writes to stderr (srun's,
 * a stranger's refusal): the fleet erases its progress line there. */
void srun_step_on_print(srun_step *st, void (*before)(void *), void *arg);

/* Closes node i's connections: its agent sees EOF and stops. */
void srun_step_close_node(srun_step *st, size_t node);

/* Ends the step: closes every connection (agents still running stop),
 * waits for srun a while, relaying its last lines, then signals it. After
 * it srun_step_cancelled is final: Slurm's "CANCELLED" may come after
 * the agents' ends. Again: nothing more. */
void srun_step_end(srun_step *st);
/* srun_step_end, then frees the step. NULL accepted. */
void srun_step_free(srun_step *st);

#endif
