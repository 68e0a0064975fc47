/* Seconds on the monotonic clock: deadlines, timeouts and benchmarks
 * everywhere in the tree measure with this one function. */
#ifndef CFG_MONO_CLOCK_H
#define CFG_MONO_CLOCK_H

#include <time.h>

static inline double
mono_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
