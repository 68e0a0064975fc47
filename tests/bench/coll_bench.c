/* coll_bench: nccl-tests-style table for libcollective on this job's ranks.
 * usage: hvdrun -np N coll_bench [MAX_BYTES]   (default 256 MiB)
 * Columns: size (B), count, type, op, time (us, mean of the iterations),
 * algbw and busbw (GB/s), #wrong (elements not equal to the reference). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <collective.h>

#include "hvd_clock.h"

/* Fewer iterations for big buffers: the whole run stays short. */
static int
iterations(size_t bytes)
{
    return bytes <= (1 << 16) ? 50 : bytes <= (1 << 22) ? 10 : 5;
}

typedef enum { ALLREDUCE, ALLGATHER, BROADCAST, ALLTOALL, REDUCESCATTER } which;

static int
run(coll_comm *c, which w, float *a, float *b, size_t n)
{
    switch (w) {
    case ALLREDUCE:
        return coll_allreduce(c, a, b, n, COLL_DT_F32, COLL_OP_SUM);
    case ALLGATHER:
        return coll_allgather(c, a, b, n / coll_size(c), COLL_DT_F32);
    case BROADCAST:
        return coll_broadcast(c, a, n, COLL_DT_F32, 0);
    case ALLTOALL:
        return coll_alltoall(c, a, b, n / coll_size(c), COLL_DT_F32);
    default:
        return coll_reducescatter(c, a, b, n, COLL_DT_F32, COLL_OP_SUM);
    }
}

/* Elements of b (or a, for broadcast) that differ from the expected. */
static long
wrong(coll_comm *c, which w, const float *a, const float *b, size_t n)
{
    int size = coll_size(c);
    size_t per = n / size;
    long bad = 0;

    if ((w == ALLGATHER || w == ALLTOALL) && per == 0)
        return 0;           /* fewer elements than ranks: nothing moved */
    if (w == REDUCESCATTER) /* this rank's block: n / size, or one more */
        n = per + ((size_t)coll_rank(c) < n % (size_t)size);
    for (size_t i = 0; i < n; i++) {
        float want = w == ALLREDUCE || w == REDUCESCATTER
                         ? (float)(size * (size + 1) / 2)
                     : w == BROADCAST ? 1.0f
                     : w == ALLGATHER ? (float)(i / per + 1)
                                      : (float)(i / per + 1);
        float got = w == BROADCAST ? a[i] : b[i];
        if ((w == ALLGATHER || w == ALLTOALL) && i >= per * size)
            break;
        bad += got != want;
    }
    return bad;
}

static void
bench(coll_comm *c, which w, size_t bytes)
{
    static const char *names[] = {"allreduce", "allgather", "broadcast",
                                  "alltoall", "reducescatter"};
    size_t n = bytes / sizeof(float);
    int size = coll_size(c), rank = coll_rank(c), iters = iterations(bytes);
    float *a = malloc(n * sizeof(float) + 4),
          *b = malloc(n * sizeof(float) + 4);
    double t0, t, algbw, factor;
    long bad;

    for (size_t i = 0; i < n; i++)
        a[i] = (float)(rank + 1);
    if (run(c, w, a, b, n) != 0) /* warm-up */
        goto fail;
    coll_barrier(c);
    t0 = hvd_mono_now();
    for (int i = 0; i < iters; i++)
        if (run(c, w, a, b, n) != 0)
            goto fail;
    t = (hvd_mono_now() - t0) / iters;
    /* one more run, untimed, from fresh input is the one checked: a
     * broadcast overwrote a, and refilling it inside the timed loop cost
     * us a pass over the buffer that mpi_bench does not make */
    for (size_t j = 0; j < n; j++)
        a[j] = (float)(rank + 1);
    memset(b, 0xff, n * sizeof(float)); /* NaNs: a run that writes none fails */
    if (run(c, w, a, b, n) != 0)
        goto fail;
    bad = wrong(c, w, a, b, n);
    algbw = bytes / t / 1e9;
    factor = w == ALLREDUCE   ? 2.0 * (size - 1) / size
             : w == BROADCAST ? 1.0
                              : (double)(size - 1) / size;
    if (rank == 0)
        printf("%12zu %12zu %6s %6s %10.1f %8.3f %8.3f %6ld\n", bytes, n,
               "float", w == ALLREDUCE || w == REDUCESCATTER ? "sum" : "none",
               t * 1e6, algbw, algbw * factor, bad);
    free(a);
    free(b);
    return;
fail:
    fprintf(stderr, "%s of %zu bytes: %s\n", names[w], bytes,
            coll_last_error(c));
    exit(1);
}

int
main(int argc, char **argv)
{
    static const char *names[] = {"allreduce", "allgather", "broadcast",
                                  "alltoall", "reducescatter"};
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)256 << 20;
    coll_comm *c;

    if (coll_init(&c) != 0) {
        fprintf(stderr, "coll_bench: %s\n", coll_last_error(NULL));
        return 1;
    }
    for (int w = ALLREDUCE; w <= REDUCESCATTER; w++) {
        if (coll_rank(c) == 0)
            printf("# %s, %d ranks\n# %10s %12s %6s %6s %10s %8s %8s %6s\n",
                   names[w], coll_size(c), "size", "count", "type", "op",
                   "time(us)", "algbw", "busbw", "#wrong");
        for (size_t bytes = 8; bytes <= max; bytes *= bytes < 262144 ? 8 : 4)
            bench(c, (which)w, bytes);
    }
    coll_finalize(c);
    return 0;
}
