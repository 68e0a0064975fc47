/* The signals a job's event loop reads from a signalfd: SIGCHLD, SIGINT,
 * SIGTERM, SIGHUP. Shared by the local loop and the multi-host loop. */
#ifndef HVDRUN_STOP_SIGNALS_H
#define HVDRUN_STOP_SIGNALS_H

#include <signal.h>

/* Blocks them (the mask before goes to *old, for the children), gives
 * SIGINT, SIGTERM and SIGHUP their default action back, ignores SIGPIPE,
 * and returns a non-blocking, close-on-exec signalfd, or -1. */
int hvdrun_signals_open(sigset_t *old);

/* The next signal read from fd, for a job that stops on the first signal
 * and kills on the second: HVDRUN_SIGNAL_STOP the first time (recorded in
 * *interrupted), HVDRUN_SIGNAL_KILL after that or once the job is already
 * stopping (with the "again" line printed), HVDRUN_SIGNAL_NONE when no
 * signal but SIGCHLD is left. *sig: the signal. */
enum hvdrun_signal {
    HVDRUN_SIGNAL_NONE,
    HVDRUN_SIGNAL_STOP,
    HVDRUN_SIGNAL_KILL
};
enum hvdrun_signal hvdrun_signals_next(int fd, int *interrupted, int stopping,
                                       int *sig);

#endif
