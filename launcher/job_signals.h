/* The signals a job's event loop reads from a signalfd: SIGCHLD, SIGINT,
 * SIGTERM, SIGHUP. Shared by the local loop and the multi-host loop. */
#ifndef HVD_JOB_SIGNALS_H
#define HVD_JOB_SIGNALS_H

#include <signal.h>

/* Blocks them (the mask before goes to *old, for the children), gives
 * SIGINT, SIGTERM and SIGHUP their default action back, ignores SIGPIPE,
 * and returns a non-blocking, close-on-exec signalfd, or -1. */
int job_signals_open(sigset_t *old);

/* The next signal read from fd, for a job that stops on the first signal
 * and kills on the second: JOB_SIGNAL_STOP the first time (recorded in
 * *interrupted), JOB_SIGNAL_KILL after that or once the job is already
 * stopping (with the "again" line printed), JOB_SIGNAL_NONE when no
 * signal but SIGCHLD is left. *sig: the signal. */
enum job_signal { JOB_SIGNAL_NONE, JOB_SIGNAL_STOP, JOB_SIGNAL_KILL };
enum job_signal job_signals_next(int fd, int *interrupted, int stopping,
                                 int *sig);

#endif
