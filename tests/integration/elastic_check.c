/* Test worker for elastic rounds: allreduces in a loop, each checked
 * against the round's size, and through every change of round: after a
 * failed allreduce (a peer died) or when coll_round_changed says the job
 * moved on, coll_reset and go on with the new identity.
 * usage: elastic_check LAST_ROUND
 * Prints "rank R of N in round K (fresh F): right" at the first checked
 * allreduce of each round, "round K ended: CODE: DETAIL" when one fails,
 * and exits 0 once it has been right in LAST_ROUND; prints "removed" and
 * exits 0 when it is not in a new round; 1 on a wrong sum or an error; 2
 * after 60 s. With ELASTIC_CHECK_DIE_HOST=H and ELASTIC_CHECK_DIE_STEP=N,
 * local rank 0 of host H exits 3 at its Nth allreduce of round 0. With
 * ELASTIC_CHECK_STAMP=1 the "right" lines end with " at T" (the wall
 * clock, seconds), and a job started again (TORCHELASTIC_RESTART_COUNT
 * >= 1) is done at its first right allreduce: tests/bench/elastic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <collective.h>

enum { N = 4096 };

/* 1 when every element is the sum over the round's ranks of rank + 1. */
static int
sum_right(const float *v, int size)
{
    float want = (float)(size * (size + 1) / 2);

    for (int i = 0; i < N; i++)
        if (v[i] != want + (float)(size * (i % 3)))
            return 0;
    return 1;
}

/* One allreduce of the round: 0 right, 1 wrong, else the failure's code. */
static int
step(coll_comm *c)
{
    static float v[N];
    int r;

    for (int i = 0; i < N; i++)
        v[i] = (float)(coll_rank(c) + 1 + i % 3);
    if ((r = coll_allreduce(c, v, v, N, COLL_DT_F32, COLL_OP_SUM)) != 0)
        return r;
    return sum_right(v, coll_size(c)) ? 0 : 1;
}

/* Leaves the round (said why) and joins the next: 0, 3 when removed. */
static int
next_round(coll_comm *c, int why)
{
    int r;

    if (why)
        printf("round %d ended: %s: %s\n", coll_round(c), coll_strerror(why),
               coll_last_error(c));
    fflush(stdout);
    if ((r = coll_reset(c)) == COLL_EREMOVED) {
        printf("removed: %s\n", coll_last_error(c));
        return 3;
    }
    if (r != 0) {
        fprintf(stderr, "reset: %s: %s\n", coll_strerror(r),
                coll_last_error(c));
        return 1;
    }
    return 0;
}

/* Ends a "right" line, with the wall clock when asked. */
static void
stamp(void)
{
    const char *on = getenv("ELASTIC_CHECK_STAMP");
    struct timespec t;

    if (on && strcmp(on, "1") == 0 && clock_gettime(CLOCK_REALTIME, &t) == 0)
        printf(" at %ld.%06ld", (long)t.tv_sec, t.tv_nsec / 1000);
    putchar('\n');
}

/* 1 in a job that --max-restarts started again. */
static int
restarted(void)
{
    const char *n = getenv("TORCHELASTIC_RESTART_COUNT");

    return n && strtol(n, NULL, 10) >= 1;
}

/* 1 when this worker is the one asked to die at this step. */
static int
dies_now(coll_comm *c, int step)
{
    const char *host = getenv("ELASTIC_CHECK_DIE_HOST");
    const char *at = getenv("ELASTIC_CHECK_DIE_STEP");
    const char *mine = getenv("HOROVOD_HOSTNAME");

    return host && at && mine && strcmp(host, mine) == 0 &&
           coll_local_rank(c) == 0 && coll_round(c) == 0 &&
           step == (int)strtol(at, NULL, 10);
}

int
main(int argc, char **argv)
{
    int last = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 0, shown = -1, r = 0;
    const char *on = getenv("HOROVOD_ELASTIC");
    int elastic = on && strcmp(on, "1") == 0;
    time_t until = time(NULL) + 60;
    struct timespec pause = {0, 20 * 1000 * 1000};
    coll_comm *c;

    if ((r = coll_init(&c)) != 0) {
        fprintf(stderr, "init: %s: %s\n", coll_strerror(r),
                coll_last_error(NULL));
        return 1;
    }
    for (int steps = 0; time(NULL) < until; steps++) {
        int changed = 0;
        if (dies_now(c, steps)) {
            printf("rank %d: dying at step %d\n", coll_rank(c), steps);
            fflush(stdout);
            _exit(3);
        }
        if ((r = step(c)) == 1) {
            fprintf(stderr, "rank %d: wrong sum in round %d\n", coll_rank(c),
                    coll_round(c));
            break;
        }
        if (r == 0 && shown != coll_round(c)) {
            shown = coll_round(c);
            printf("rank %d of %d in round %d (fresh %d): right", coll_rank(c),
                   coll_size(c), shown, coll_round_fresh(c));
            stamp();
            fflush(stdout);
        }
        if (r == 0 && (shown == last || restarted()))
            break;
        /* (a job that is not elastic loops until a failure stops it) */
        if (r == 0 && elastic && (r = coll_round_changed(c, &changed)) != 0)
            break;
        if ((r != 0 || changed) && (r = next_round(c, r)) != 0)
            break;
        nanosleep(&pause, NULL);
    }
    coll_finalize(c);
    if (r == 3)
        return 0;
    if (r != 0)
        return 1;
    /* (a job started again is done at its first right allreduce) */
    return shown == last || (shown >= 0 && restarted()) ? 0 : 2;
}
