/* What the launcher tells each host's agent: one JSON line on the agent's
 * stdin before anything else (the job token travels here, never in argv).
 * After it, the launcher sends control lines: "go" (start the workers),
 * "abort REASON" (stop them gracefully), "kill". The agent answers on its
 * stdout with "@hvd ready IFACE ADDR" or "@hvd error MESSAGE" lines before
 * its workers start; later lines there are the workers' tagged output. */
#ifndef HVDRUN_BRIEF_H
#define HVDRUN_BRIEF_H

#include <jansson.h>

#include "envlist.h"
#include "hostlist.h"
#include "plan.h"

#define HVDRUN_CONTROL "@hvd "

typedef struct hvdrun_brief {
    int host; /* this host's index in the plan */
    cfg_hostlist hosts;
    cfg_plan plan;
    int np;
    char **argv; /* NULL-terminated */
    envlist base;
    char **chosen; /* the names -x gave, NULL-terminated (or NULL) */
    const char *cwd;
    const char *rendezvous_addr; /* hvdd as this host reaches it */
    int rendezvous_port;
    const char *token;
    const char *network_interface; /* or NULL */
    const char *output_dir;        /* or NULL */
    double heartbeat, kill_grace, start_timeout;
    int timestamps, verbose;
    json_t *root; /* decoded: owns the strings above */
} hvdrun_brief;

/* The line for one host (with its trailing newline), malloc'd; NULL when
 * out of memory. Uses every field but plan and root. */
char *hvdrun_brief_encode(const hvdrun_brief *j);
/* Parses a line into j (hosts, plan and base built); 0, or -1 with a
 * reason in err. Release with hvdrun_brief_release. */
int hvdrun_brief_decode(const char *line, hvdrun_brief *j, char *err,
                        size_t size);
void hvdrun_brief_release(hvdrun_brief *j);
/* A host that joins an elastic job: its workers start in round `round`,
 * whose hosts and slots are spec ("a:2,c:2,x:2", in rank order); the
 * plan, this host's index and HOROVOD_ELASTIC_ROUND follow. 0, or -1
 * with err (this host not in spec). */
int hvdrun_brief_join_round(hvdrun_brief *j, int round, const char *spec,
                            char *err, size_t size);

#endif
