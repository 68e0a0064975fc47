/* The signals hvdrun's job loops take: blocked and read from a
 * signalfd; the first stops the job, the second kills it. */
#include "stop_signals.h"

#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

int
hvdrun_signals_open(sigset_t *old)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &set, old) != 0)
        return -1;
    /* A shell starts background jobs with SIGINT ignored, and an ignored
     * signal never reaches a signalfd: take them back. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

enum hvdrun_signal
hvdrun_signals_next(int fd, int *interrupted, int stopping, int *sig)
{
    struct signalfd_siginfo si;

    while (read(fd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGCHLD)
            continue;
        *sig = (int)si.ssi_signo;
        if (*interrupted || stopping) {
            fprintf(stderr, "hvdrun: %s again: killing every worker\n",
                    strsignal(*sig));
            if (!*interrupted)
                *interrupted = *sig;
            return HVDRUN_SIGNAL_KILL;
        }
        *interrupted = *sig;
        return HVDRUN_SIGNAL_STOP;
    }
    return HVDRUN_SIGNAL_NONE;
}
