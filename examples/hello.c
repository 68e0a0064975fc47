/* The smallest libcollective program: each rank says who it is. */
#include <stdio.h>
#include <unistd.h>

#include <collective.h>

int
main(void)
{
    coll_comm *c;
    char host[256] = "?";
    int r;

    if ((r = coll_init(&c)) != 0) {
        fprintf(stderr, "hello: %s: %s\n", coll_strerror(r),
                coll_last_error(NULL));
        return 1;
    }
    gethostname(host, sizeof(host));
    printf("rank %d of %d (local %d of %d, cross %d of %d) on %s\n",
           coll_rank(c), coll_size(c), coll_local_rank(c), coll_local_size(c),
           coll_cross_rank(c), coll_cross_size(c), host);
    coll_finalize(c);
    return 0;
}
