/* The peer of fusion_bench: OpenMPI's MPI_Allreduce on the ResNet-50
 * gradient set, per tensor and on one buffer holding all of it (no
 * copies: MPI's best case). usage: mpirun ... mpi_fusion [STEPS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "resnet50.h"

int
main(int argc, char **argv)
{
    size_t sizes[RESNET50_TENSORS], total = 0;
    float *grad[RESNET50_TENSORS], *all;
    int steps, n, rank, size;
    double t0, per_tensor, one;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    steps = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 5;
    n = resnet50_sizes(sizes);
    for (int i = 0; i < n; i++) {
        total += sizes[i];
        grad[i] = calloc(sizes[i], sizeof(float));
    }
    all = calloc(total, sizeof(float));
    for (int i = 0; i < n; i++) /* warm-up */
        MPI_Allreduce(MPI_IN_PLACE, grad[i], (int)sizes[i], MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int s = 0; s < steps; s++)
        for (int i = n - 1; i >= 0; i--)
            MPI_Allreduce(MPI_IN_PLACE, grad[i], (int)sizes[i], MPI_FLOAT,
                          MPI_SUM, MPI_COMM_WORLD);
    per_tensor = (MPI_Wtime() - t0) / steps * 1e3;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int s = 0; s < steps; s++)
        MPI_Allreduce(MPI_IN_PLACE, all, (int)total, MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
    one = (MPI_Wtime() - t0) / steps * 1e3;
    if (rank == 0)
        printf("OpenMPI TCP, %d ranks: %d per-tensor MPI_Allreduce %.1f "
               "ms/step, one buffer %.1f ms/step\n",
               size, n, per_tensor, one);
    MPI_Finalize();
    return 0;
}
