/* What a job costs to start working: coll_init, one allreduce of an int
 * (every rank has joined and can talk to every other), coll_finalize.
 * Its peer is mpi_join.c. usage: hvdrun -np N join_bench */
#include <stdio.h>

#include <collective.h>

int
main(void)
{
    coll_comm *c;
    int one = 1, r;

    if ((r = coll_init(&c)) != 0) {
        fprintf(stderr, "join_bench: %s\n", coll_last_error(NULL));
        return 1;
    }
    if ((r = coll_allreduce(c, &one, &one, 1, COLL_DT_I32, COLL_OP_SUM)) != 0 ||
        one != coll_size(c)) {
        fprintf(stderr, "join_bench: %s\n",
                r ? coll_last_error(c) : "wrong sum");
        return 1;
    }
    return coll_finalize(c) != 0;
}
