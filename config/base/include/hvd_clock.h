/* Seconds on the monotonic clock: deadlines, timeouts and benchmarks
 * everywhere in the tree measure with this one function. Part of hvdbase,
 * the small library every component of the tree may link (header only). */
#ifndef HVD_CLOCK_H
#define HVD_CLOCK_H

#include <pthread.h>
#include <time.h>

static inline double
hvd_mono_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The time on clock (CLOCK_MONOTONIC, or CLOCK_REALTIME for a condition
 * variable left on its default clock) `seconds` from now, as
 * pthread_cond_timedwait takes a deadline. */
static inline struct timespec
hvd_clock_after(clockid_t clock, double seconds)
{
    struct timespec ts;
    time_t whole = (time_t)seconds;
    long ns;

    clock_gettime(clock, &ts);
    ns = ts.tv_nsec + (long)((seconds - (double)whole) * 1e9 + 0.5);
    ts.tv_sec += whole;
    if (ns >= 1000000000L) {
        ts.tv_sec++;
        ns -= 1000000000L;
    }
    ts.tv_nsec = ns;
    return ts;
}

/* A condition variable whose timed waits take deadlines on the monotonic
 * clock (hvd_clock_after(CLOCK_MONOTONIC, ...)): a wall clock set back
 * must not stretch a wait. 0 or an error number. */
static inline int
hvd_cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t a;
    int r;

    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    r = pthread_cond_init(cond, &a);
    pthread_condattr_destroy(&a);
    return r;
}

#endif
