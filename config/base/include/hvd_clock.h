/* Seconds on the monotonic clock: deadlines, timeouts and benchmarks
 * everywhere in the tree measure with this one function. Part of hvdbase,
 * the small library every component of the tree may link (header only). */
#ifndef HVD_CLOCK_H
#define HVD_CLOCK_H

#include <time.h>

static inline double
hvd_mono_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
