/* The peer of coll_bench: the same table for MPI (run with OpenMPI's TCP
 * transport). Built by tests/bench/collectives with mpicc.openmpi.
 * usage: mpirun ... mpi_bench [MAX_BYTES] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int
iterations(size_t bytes)
{
    return bytes <= (1 << 16) ? 50 : bytes <= (1 << 22) ? 10 : 5;
}

static void
run(int w, float *a, float *b, int n, int size)
{
    if (w == 0)
        MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else if (w == 1)
        MPI_Allgather(a, n / size, MPI_FLOAT, b, n / size, MPI_FLOAT,
                      MPI_COMM_WORLD);
    else if (w == 2)
        MPI_Bcast(a, n, MPI_FLOAT, 0, MPI_COMM_WORLD);
    else if (w == 3)
        MPI_Alltoall(a, n / size, MPI_FLOAT, b, n / size, MPI_FLOAT,
                     MPI_COMM_WORLD);
    else
        MPI_Reduce_scatter_block(a, b, n / size, MPI_FLOAT, MPI_SUM,
                                 MPI_COMM_WORLD);
}

int
main(int argc, char **argv)
{
    static const char *names[] = {"allreduce", "allgather", "broadcast",
                                  "alltoall", "reducescatter"};
    size_t max;
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    max = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)256 << 20;
    for (int w = 0; w < 5; w++) {
        if (rank == 0)
            printf("# %s, %d ranks (MPI)\n", names[w], size);
        for (size_t bytes = 8; bytes <= max; bytes *= bytes < 262144 ? 8 : 4) {
            int n = (int)(bytes / sizeof(float)), iters = iterations(bytes);
            float *a = malloc(bytes + 4), *b = malloc(bytes + 4);
            for (int i = 0; i < n; i++)
                a[i] = (float)(rank + 1);
            run(w, a, b, n, size);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                run(w, a, b, n, size);
            double t = (MPI_Wtime() - t0) / iters, algbw = bytes / t / 1e9;
            double f = w == 0   ? 2.0 * (size - 1) / size
                       : w == 2 ? 1.0
                                : (double)(size - 1) / size;
            if (rank == 0)
                printf("%12zu %12d %6s %6s %10.1f %8.3f %8.3f %6d\n", bytes, n,
                       "float", w == 0 || w == 4 ? "sum" : "none", t * 1e6,
                       algbw, algbw * f, 0);
            free(a);
            free(b);
        }
    }
    MPI_Finalize();
    return 0;
}
