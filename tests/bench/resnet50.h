/* The ResNet-50 gradient set: the sizes of torchvision's resnet50
 * parameters (161 tensors, 25,557,032 floats), in model order. Shared by
 * fusion_bench.c and mpi_fusion.c. */
#ifndef BENCH_RESNET50_H
#define BENCH_RESNET50_H

#include <stddef.h>

#define RESNET50_TENSORS 161
#define RESNET50_PARAMS 25557032

/* Fills sizes[RESNET50_TENSORS]; returns the number of tensors. */
static int
resnet50_sizes(size_t *sizes)
{
    static const int planes[4] = {64, 128, 256, 512}, blocks[4] = {3, 4, 6, 3};
    size_t in = 64;
    int n = 0;

    sizes[n++] = 64 * 3 * 7 * 7; /* conv1, bn1 */
    sizes[n++] = 64;
    sizes[n++] = 64;
    for (int l = 0; l < 4; l++) {
        size_t p = (size_t)planes[l];
        for (int b = 0; b < blocks[l]; b++) {
            sizes[n++] = p * in; /* conv1 1x1 + bn */
            sizes[n++] = p;
            sizes[n++] = p;
            sizes[n++] = p * p * 9; /* conv2 3x3 + bn */
            sizes[n++] = p;
            sizes[n++] = p;
            sizes[n++] = 4 * p * p; /* conv3 1x1 + bn */
            sizes[n++] = 4 * p;
            sizes[n++] = 4 * p;
            if (b == 0) { /* downsample conv + bn */
                sizes[n++] = 4 * p * in;
                sizes[n++] = 4 * p;
                sizes[n++] = 4 * p;
            }
            in = 4 * p;
        }
    }
    sizes[n++] = 1000 * 2048; /* fc */
    sizes[n++] = 1000;
    return n;
}

#endif
