/* The signals a job's event loop reads from a signalfd: SIGCHLD, SIGINT,
 * SIGTERM, SIGHUP. Shared by the local loop and the multi-host loop. */
#ifndef HVD_JOB_SIGNALS_H
#define HVD_JOB_SIGNALS_H

#include <signal.h>

/* Blocks them (the mask before goes to *old, for the children), gives
 * SIGINT, SIGTERM and SIGHUP their default action back, ignores SIGPIPE,
 * and returns a non-blocking, close-on-exec signalfd, or -1. */
int job_signals_open(sigset_t *old);

#endif
