/* The peer of fusion_bench: OpenMPI's MPI_Allreduce on the ResNet-50
 * gradient set, per tensor and on one buffer holding all of it (no
 * copies: MPI's best case). usage: mpirun ... mpi_fusion [STEPS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "median.h"
#include "resnet50.h"

int
main(int argc, char **argv)
{
    size_t sizes[RESNET50_TENSORS], total = 0;
    float *grad[RESNET50_TENSORS], *all;
    int steps, n, rank, size;
    double t0, *per_tensor, *one;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    steps = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 5;
    if (steps < 1)
        steps = 1;
    n = resnet50_sizes(sizes);
    for (int i = 0; i < n; i++) {
        total += sizes[i];
        grad[i] = calloc(sizes[i], sizeof(float));
    }
    all = calloc(total, sizeof(float));
    per_tensor = calloc((size_t)steps, sizeof(double));
    one = calloc((size_t)steps, sizeof(double));
    /* a warm-up step of each, then the two in turns */
    for (int s = -1; s < steps; s++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int i = n - 1; i >= 0; i--)
            MPI_Allreduce(MPI_IN_PLACE, grad[i], (int)sizes[i], MPI_FLOAT,
                          MPI_SUM, MPI_COMM_WORLD);
        if (s >= 0)
            per_tensor[s] = (MPI_Wtime() - t0) * 1e3;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, all, (int)total, MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
        if (s >= 0)
            one[s] = (MPI_Wtime() - t0) * 1e3;
    }
    if (rank == 0)
        printf("OpenMPI, %d ranks, median of %d steps in turns: %d "
               "per-tensor MPI_Allreduce %.1f ms/step, one buffer %.1f "
               "ms/step\n",
               size, steps, n, median(per_tensor, steps), median(one, steps));
    MPI_Finalize();
    return 0;
}
