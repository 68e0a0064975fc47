/* --host-discovery-script: a command (run by /bin/sh, as horovodrun does)
 * that prints the hosts a job may use now, one "host[:slots]" per line;
 * a line without slots gets --slots-per-host. The first run is made
 * before the plan (discovery_run); the fleet then runs it again every
 * second without blocking (discovery_turn). */
#ifndef HVD_DISCOVERY_H
#define HVD_DISCOVERY_H

#include <stddef.h>
#include <sys/types.h>

#include "hostlist.h"

#define DISCOVERY_OUTPUT_MAX 65536
/* How long one run may take (seconds). */
#define DISCOVERY_TIMEOUT 30

typedef struct discovery {
    const char *command;
    int default_slots;
    double period, timeout;
    pid_t pid; /* a run in progress, or 0 */
    int out_fd, err_fd;
    char out[DISCOVERY_OUTPUT_MAX], err[1024];
    size_t out_len, err_len;
    double started, next;
} discovery;

/* Parses the script's output (blank lines skipped) into out (appended).
 * 0, or -1 with the bad line named in err. */
int discovery_parse(const char *text, int default_slots, cfg_hostlist *out,
                    char *err, size_t errlen);

/* One run to its end (at most timeout seconds); its hosts into out. 0,
 * or -1 with why in err (exit code, signal, bad line, timeout). */
int discovery_run(const char *command, int default_slots, double timeout,
                  cfg_hostlist *out, char *err, size_t errlen);

/* The fleet's runs, one at a time, the next `period` seconds after the
 * last one began. */
void discovery_init(discovery *d, const char *command, int default_slots,
                    double period, double timeout);
/* Starts a run when due, reads what it printed, reaps it: 1 when a run
 * ended well (its hosts in out, which is cleared first), -1 when one
 * failed (why in err), 0 otherwise. */
int discovery_turn(discovery *d, double now, cfg_hostlist *out, char *err,
                   size_t errlen);
/* Its pipes' descriptors for poll (-1 when none). */
int discovery_fd(const discovery *d, int which);
/* Kills a run in progress and waits for it. */
void discovery_release(discovery *d);

#endif
