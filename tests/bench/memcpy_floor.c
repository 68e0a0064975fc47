/* memcpy_floor: what one core's memcpy moves per second on this host, at
 * the sizes the collectives benchmark reports: the floor any intra-host
 * transport works against (a rank's data must be copied at least once).
 * And the cross-CPU hand-off: two processes on two CPUs, one copying a
 * buffer into shared memory and the other copying it out, in turn, the
 * least any transport between ranks on different CPUs does. On a VM it
 * shows when the CPUs are far apart: a 1 MiB hand-off took 7-10x longer
 * for stretches of time, and every shared-memory figure with it.
 * usage: memcpy_floor SIZE...   prints "memcpy SIZE GB/s" and (with two
 * CPUs to run on) "cross SIZE GB/s" per size, each the median of 9 runs
 * of about 20 MiB of copying each (200 MiB for the cross figure, whose
 * slow stretches a short run can miss). The cross figure counts every copy
 * (in and out, both ways), one at a time: with no cost for crossing
 * CPUs it would be the memcpy figure. */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hvd_clock.h"
#include "median.h"

static double
gbps(size_t bytes)
{
    char *src = malloc(bytes), *dst = malloc(bytes);
    double runs[9];
    int reps = (int)((20u << 20) / bytes) + 1;

    if (src == NULL || dst == NULL)
        return 0;
    memset(src, 1, bytes);
    memset(dst, 2, bytes); /* every page is there before the clock runs */
    for (int r = 0; r < 9; r++) {
        double t0 = hvd_mono_now();
        for (int i = 0; i < reps; i++) {
            memcpy(dst, src, bytes);
            __asm__ __volatile__("" : : "r"(dst) : "memory");
        }
        runs[r] = (double)bytes * reps / (hvd_mono_now() - t0) / 1e9;
    }
    free(src);
    free(dst);
    return median(runs, 9);
}

/* The first two CPUs this process may run on, or -1. */
static int
two_cpus(int cpu[2])
{
    cpu_set_t set;
    int n = 0;

    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET(c, &set))
            cpu[n++] = c;
    return n == 2 ? 0 : -1;
}

static void
pin(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

/* Waits until *turn is want; 0, or -1 after 10 s (a peer that died). */
static int
await(volatile int *turn, int want)
{
    double end = hvd_mono_now() + 10;

    for (unsigned i = 0; *turn != want; i++)
        if (i % 1024 == 0 && (sched_yield(), hvd_mono_now() > end))
            return -1;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return 0;
}

/* One side of `trips` round trips through two areas of shared: side 0
 * copies its buffer into the first and, at the reply, out of the second;
 * side 1 copies the first out and its copy into the second (as a
 * transport's posts and results lie apart, each area's lines change
 * hands between the CPUs every time). *turn counts the hand-offs from
 * `from` on (2 per round trip), run after run. */
static int
hand_off(char *shared, volatile int *turn, char *mine, size_t bytes, int side,
         int from, long trips)
{
    for (int k = from; k < from + 2 * (int)trips; k += 2) {
        if (side == 0) {
            memcpy(shared, mine, bytes);
            __atomic_store_n(turn, k + 1, __ATOMIC_RELEASE);
            if (await(turn, k + 2) != 0)
                return -1;
            memcpy(mine, shared + bytes, bytes);
        } else {
            if (await(turn, k + 1) != 0)
                return -1;
            memcpy(mine, shared, bytes);
            memcpy(shared + bytes, mine, bytes);
            __atomic_store_n(turn, k + 2, __ATOMIC_RELEASE);
        }
    }
    return 0;
}

/* GB/s copied in hand-offs between two processes on cpu[0] and cpu[1]
 * (4 copies of bytes per round trip): the median of 9 runs; 0 when it
 * cannot run. */
static double
cross_gbps(size_t bytes, const int cpu[2])
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *shared = mmap(NULL, 2 * bytes + page, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    /* the turn in its own cache line, past the areas (the page spare) */
    volatile int *turn = (volatile int *)(shared + (2 * bytes + 63) / 64 * 64);
    long trips = (long)((200u << 20) / (4 * bytes)) + 1;
    double runs[9], r = 0;
    char *mine = malloc(bytes);
    pid_t child, parent = getpid();

    if (shared == MAP_FAILED || mine == NULL)
        return 0;
    if (trips > 2000) /* a small size is bound by the turns, not copies */
        trips = 2000;
    memset(mine, 1, bytes);
    memset(shared, 2, 2 * bytes);
    if ((child = fork()) == 0) {
        /* gone with this process, whatever ends it */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        pin(cpu[1]);
        for (int k = 0; k < 9; k++)
            if (hand_off(shared, turn, mine, bytes, 1, 2 * (int)trips * k,
                         trips) != 0)
                _exit(1);
        _exit(0);
    }
    pin(cpu[0]);
    for (int k = 0; child > 0 && k < 9; k++) {
        double t0 = hvd_mono_now();
        if (hand_off(shared, turn, mine, bytes, 0, 2 * (int)trips * k, trips) !=
            0)
            break;
        runs[k] = 4.0 * (double)bytes * trips / (hvd_mono_now() - t0) / 1e9;
        if (k == 8)
            r = median(runs, 9);
    }
    if (child > 0 && r == 0)
        kill(child, SIGKILL);
    if (child > 0)
        waitpid(child, NULL, 0);
    munmap(shared, 2 * bytes + page);
    free(mine);
    return r;
}

int
main(int argc, char **argv)
{
    int cpu[2], cross = two_cpus(cpu) == 0;

    for (int i = 1; i < argc; i++) {
        size_t bytes = strtoull(argv[i], NULL, 10);
        if (bytes)
            printf("memcpy %zu %.3f\n", bytes, gbps(bytes));
    }
    for (int i = 1; cross && i < argc; i++) {
        size_t bytes = strtoull(argv[i], NULL, 10);
        double g = bytes ? cross_gbps(bytes, cpu) : 0;
        if (g > 0)
            printf("cross %zu %.3f\n", bytes, g);
    }
    return 0;
}
