/* Fusion benchmark: one training step's gradients (the ResNet-50 set)
 * allreduced (avg) per step, as 161 async requests fused by libcollective's
 * background thread, and as 161 blocking calls, in turns step by step.
 * Prints the median ms per step of each.
 * usage: hvdrun -np N fusion_bench [STEPS]   (default 5) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <collective.h>

#include "median.h"
#include "hvd_clock.h"
#include "resnet50.h"

/* One step of 161 async requests, fused by the background thread: ms,
 * or -1. */
static double
fused_step(coll_comm *c, float **grad, const size_t *sizes, int n)
{
    coll_request *req[RESNET50_TENSORS];
    double t0 = hvd_mono_now();

    for (int i = n - 1; i >= 0; i--) { /* backprop order: last first */
        char name[16];
        snprintf(name, sizeof(name), "g%d", i);
        if (coll_allreduce_async(c, name, grad[i], grad[i], sizes[i],
                                 COLL_DT_F32, COLL_OP_AVG, &req[i]) != 0)
            return -1;
    }
    for (int i = 0; i < n; i++)
        if (coll_wait(req[i]) != 0)
            return -1;
    return (hvd_mono_now() - t0) * 1e3;
}

/* One step of 161 blocking calls: ms, or -1. */
static double
blocking_step(coll_comm *c, float **grad, const size_t *sizes, int n)
{
    double t0 = hvd_mono_now();

    for (int i = n - 1; i >= 0; i--)
        if (coll_allreduce(c, grad[i], grad[i], sizes[i], COLL_DT_F32,
                           COLL_OP_AVG) != 0)
            return -1;
    return (hvd_mono_now() - t0) * 1e3;
}

int
main(int argc, char **argv)
{
    size_t sizes[RESNET50_TENSORS], total = 0;
    int steps = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 5, n;
    float *grad[RESNET50_TENSORS];
    double *fused, *blocking;
    coll_comm *c;

    n = resnet50_sizes(sizes);
    for (int i = 0; i < n; i++) {
        total += sizes[i];
        grad[i] = calloc(sizes[i], sizeof(float));
    }
    if (steps < 1)
        steps = 1;
    fused = calloc((size_t)steps, sizeof(double));
    blocking = calloc((size_t)steps, sizeof(double));
    if (n != RESNET50_TENSORS || total != RESNET50_PARAMS) {
        fprintf(stderr, "fusion_bench: %d tensors, %zu params\n", n, total);
        return 1;
    }
    if (coll_init(&c) != 0) {
        fprintf(stderr, "fusion_bench: %s\n", coll_last_error(NULL));
        return 1;
    }
    /* a warm-up step of each, then the two in turns, each step starting
     * on every rank together */
    for (int s = -1; s < steps; s++) {
        double f, b;
        if (coll_barrier(c) != 0 || (f = fused_step(c, grad, sizes, n)) < 0 ||
            coll_barrier(c) != 0 || (b = blocking_step(c, grad, sizes, n)) < 0)
            goto fail;
        if (s >= 0)
            fused[s] = f, blocking[s] = b;
    }
    if (coll_rank(c) == 0)
        printf("libcollective, %d ranks, %d tensors, %zu floats, median of %d "
               "steps in turns: fused async %.1f ms/step, %d blocking calls "
               "%.1f ms/step\n",
               coll_size(c), n, total, steps, median(fused, steps), n,
               median(blocking, steps));
    coll_finalize(c);
    return 0;
fail:
    fprintf(stderr, "fusion_bench: %s\n", coll_last_error(c));
    return 1;
}
