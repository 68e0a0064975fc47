/* memcpy_floor: what one core's memcpy moves per second on this host, at
 * the sizes the collectives benchmark reports: the floor any intra-host
 * transport works against (a rank's data must be copied at least once).
 * usage: memcpy_floor SIZE...   prints "memcpy SIZE GB/s" per size, the
 * median of 9 runs of enough copies to take about 20 ms each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hvd_clock.h"

static int
by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double
gbps(size_t bytes)
{
    char *src = malloc(bytes), *dst = malloc(bytes);
    double runs[9];
    int reps = (int)((20u << 20) / bytes) + 1;

    if (src == NULL || dst == NULL)
        return 0;
    memset(src, 1, bytes);
    memset(dst, 2, bytes); /* every page is there before the clock runs */
    for (int r = 0; r < 9; r++) {
        double t0 = hvd_mono_now();
        for (int i = 0; i < reps; i++) {
            memcpy(dst, src, bytes);
            __asm__ __volatile__("" : : "r"(dst) : "memory");
        }
        runs[r] = (double)bytes * reps / (hvd_mono_now() - t0) / 1e9;
    }
    qsort(runs, 9, sizeof(runs[0]), by_value);
    free(src);
    free(dst);
    return runs[4];
}

int
main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        size_t bytes = strtoull(argv[i], NULL, 10);
        if (bytes)
            printf("memcpy %zu %.3f\n", bytes, gbps(bytes));
    }
    return 0;
}
