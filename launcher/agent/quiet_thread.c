#include "quiet_thread.h"

#include <signal.h>

int
quiet_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    int r;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    r = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r;
}
