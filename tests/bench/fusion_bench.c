/* Fusion benchmark: one training step's gradients (the ResNet-50 set)
 * allreduced (avg) per step, as 161 async requests fused by libcollective's
 * background thread, and as 161 blocking calls. Prints ms per step.
 * usage: hvdrun -np N fusion_bench [STEPS]   (default 5) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <collective.h>

#include "mono_clock.h"
#include "resnet50.h"

int
main(int argc, char **argv)
{
    size_t sizes[RESNET50_TENSORS], total = 0;
    int steps = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 5, n;
    float *grad[RESNET50_TENSORS];
    coll_request *req[RESNET50_TENSORS];
    coll_comm *c;
    double t0 = 0, fused, blocking;

    n = resnet50_sizes(sizes);
    for (int i = 0; i < n; i++) {
        total += sizes[i];
        grad[i] = calloc(sizes[i], sizeof(float));
    }
    if (n != RESNET50_TENSORS || total != RESNET50_PARAMS) {
        fprintf(stderr, "fusion_bench: %d tensors, %zu params\n", n, total);
        return 1;
    }
    if (coll_init(&c) != 0) {
        fprintf(stderr, "fusion_bench: %s\n", coll_last_error(NULL));
        return 1;
    }
    for (int s = -1; s < steps; s++) { /* one warm-up step */
        if (s == 0)
            t0 = mono_now();
        for (int i = n - 1; i >= 0; i--) { /* backprop order: last first */
            char name[16];
            snprintf(name, sizeof(name), "g%d", i);
            if (coll_allreduce_async(c, name, grad[i], grad[i], sizes[i],
                                     COLL_DT_F32, COLL_OP_AVG, &req[i]) != 0)
                goto fail;
        }
        for (int i = 0; i < n; i++)
            if (coll_wait(req[i]) != 0)
                goto fail;
    }
    fused = (mono_now() - t0) / steps * 1e3;
    coll_barrier(c);
    t0 = mono_now();
    for (int s = 0; s < steps; s++)
        for (int i = n - 1; i >= 0; i--)
            if (coll_allreduce(c, grad[i], grad[i], sizes[i], COLL_DT_F32,
                               COLL_OP_AVG) != 0)
                goto fail;
    blocking = (mono_now() - t0) / steps * 1e3;
    if (coll_rank(c) == 0)
        printf("libcollective, %d ranks, %d tensors, %zu floats: fused async "
               "%.1f ms/step, %d blocking calls %.1f ms/step\n",
               coll_size(c), n, total, fused, n, blocking);
    coll_finalize(c);
    return 0;
fail:
    fprintf(stderr, "fusion_bench: %s\n", coll_last_error(c));
    return 1;
}
