/* The peer of join_bench: MPI_Init, one MPI_Allreduce of an int,
 * MPI_Finalize. usage: mpirun ... mpi_join */
#include <mpi.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
    int one = 1, sum = 0, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (sum != size) {
        fprintf(stderr, "mpi_join: wrong sum\n");
        return 1;
    }
    return 0;
}
