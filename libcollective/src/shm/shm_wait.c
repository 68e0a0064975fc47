/* Posting a step and waiting for the other ranks' posts. A wait spins a
 * while (yielding the CPU at each retry when this host has more ranks
 * than CPUs, as the TCP ring does), then sleeps on the peer's counter
 * with a futex, which the peer wakes when it posts: a rank that waits
 * for a slow peer (one still computing its gradients) does not take the
 * CPU from it. Between sleeps it checks that the peer still lives
 * (pidfd) and that the timeout has not passed, so a rank that died in
 * the middle of a collective fails the others at once, and one that
 * hangs, within HOROVOD_GLOO_TIMEOUT_SECONDS. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hvd_clock.h"
#include "shm.h"

/* How long a wait spins before it sleeps: with a CPU per rank, and
 * (yielding) without. */
#define SHM_SPIN_US 100
#define SHM_YIELD_US 500
/* One sleep on the futex: how often a sleeping rank looks for a dead
 * peer. */
#define SHM_NAP_NS (2 * 1000 * 1000)

static int
reached(uint32_t have, uint32_t want)
{
    return (int32_t)(have - want) >= 0; /* the counter may wrap */
}

static void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* 1 when rank k's process has ended. */
static int
peer_gone(const shm_transport *t, int k)
{
    struct pollfd p = {t->pidfd[k], POLLIN, 0};

    if (t->pidfd[k] >= 0)
        return poll(&p, 1, 0) == 1;
    return t->pid[k] > 0 && kill(t->pid[k], 0) != 0 && errno == ESRCH;
}

static int
spin(const shm_transport *t, const uint32_t *word, uint32_t want)
{
    int yields = !t->spec.cpu_each;
    double until = hvd_mono_now() + (yields ? SHM_YIELD_US : SHM_SPIN_US) / 1e6;

    for (unsigned i = 1;; i++) {
        if (reached(__atomic_load_n(word, __ATOMIC_ACQUIRE), want))
            return 1;
        /* even with a CPU per rank, the scheduler may put the peer on
         * this one for a while: with another busy process on one of the
         * 2 CPUs, a 2-rank 1 MiB allreduce took 500-880 us spinning on
         * pause alone, 160-275 yielding every 16 tries */
        if (yields || i % 16 == 0)
            sched_yield();
        else
            cpu_relax();
        if (i % 64 == 0 && hvd_mono_now() > until)
            return 0;
    }
}

/* Sleeps until rank k posts want, it dies or the timeout passes. */
static int
nap(shm_transport *t, int k, uint32_t want, const char *what, char *err,
    size_t errlen)
{
    uint32_t *word = &shm_line_of(t, k)->posted;
    uint32_t *sleepers = &t->head->sleepers;
    double deadline = hvd_mono_now() + t->spec.timeout_ms / 1000.0;
    struct timespec nap = {0, SHM_NAP_NS};

    for (;;) {
        uint32_t v;
        /* counted before the look, as the poster posts before it counts:
         * one of the two sees the other (both sequentially consistent) */
        __atomic_fetch_add(sleepers, 1, __ATOMIC_SEQ_CST);
        v = __atomic_load_n(word, __ATOMIC_SEQ_CST);
        if (!reached(v, want))
            syscall(SYS_futex, word, FUTEX_WAIT, v, &nap, NULL, 0);
        __atomic_fetch_sub(sleepers, 1, __ATOMIC_SEQ_CST);
        if (reached(__atomic_load_n(word, __ATOMIC_ACQUIRE), want))
            return 0;
        if (peer_gone(t, k)) {
            snprintf(err, errlen,
                     "%s: rank %d (pid %d) of this host ended "
                     "in the middle of it",
                     what, k, t->pid[k]);
            return COLL_ETRANSPORT;
        }
        if (hvd_mono_now() > deadline) {
            snprintf(err, errlen,
                     "%s: no progress from rank %d (pid %d) "
                     "of this host for %d s",
                     what, k, t->pid[k], t->spec.timeout_ms / 1000);
            return COLL_ETRANSPORT;
        }
    }
}

int
shm_step(shm_transport *t, const char *what, char *err, size_t errlen)
{
    uint32_t want = ++t->step;
    uint32_t *mine = &shm_line_of(t, t->base.rank)->posted;
    int r = 0;

    __atomic_store_n(mine, want, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&t->head->sleepers, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, mine, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    for (int k = 0; r == 0 && k < t->base.size; k++) {
        uint32_t *word = &shm_line_of(t, k)->posted;
        if (k != t->base.rank && !spin(t, word, want))
            r = nap(t, k, want, what, err, errlen);
    }
    return r;
}
