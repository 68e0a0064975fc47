/* link_srun.c over a real srun_step: every node's handshakes go through
 * the one step, so advancing one node's link can finish another's, whose
 * wake-up is then gone from the step's poll fd. hvdrun_link_ready says
 * such a link can open now (the fleet then does not sleep before it);
 * without it a node's brief waited for the next unrelated event, up to
 * the loop's 100 ms. The nodes are the real hvdrun-srun-agent (with the
 * real hvdrun-agent behind it), started by the test; the step's srun is
 * a stand-in first in PATH that only says where the step listens and
 * waits. The streams also go without Nagle's wait. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_link.h"
#include "srun_auth.h"
#include "srun_step.h"
#include "unit.h"

#define SECRET                                                                 \
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char *const nodes[] = {"n0", "n1"};
static srun_step *st;
static hvdrun_link *link0, *link1;
static pid_t agents[2];
static int port;

static char dir[64];

/* A stand-in for srun, first in PATH: it says where the step listens (its
 * HVDRUN_SRUN_LINK, in dir/link) and waits to be stopped; with then, it
 * runs that shell line instead of waiting. */
static void
fake_srun_then(const char *then)
{
    char path[128], *old = getenv("PATH"), *both;
    FILE *f;

    snprintf(dir, sizeof(dir), "/tmp/link_srun.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/srun", dir);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fprintf(f,
            "#!/bin/sh\nprintf '%%s' \"$HVDRUN_SRUN_LINK\" >%s/link.new\n"
            "mv %s/link.new %s/link\n%s\n",
            dir, dir, dir, then ? then : "exec sleep 60");
    fclose(f);
    ck_assert_int_eq(chmod(path, 0755), 0);
    ck_assert_int_ge(asprintf(&both, "%s:%s", dir, old ? old : "/usr/bin:/bin"),
                     0);
    setenv("PATH", both, 1);
    free(both);
}

/* The step's port, once the stand-in said it (up to 10 s). */
static int
step_port(void)
{
    char path[128], text[1100] = {0};
    int p = -1;

    snprintf(path, sizeof(path), "%s/link", dir);
    for (int k = 0; k < 200 && p < 0; k++) {
        FILE *f = fopen(path, "r");
        struct timespec ms50 = {0, 50 * 1000 * 1000};
        if (f && fgets(text, sizeof(text), f) && sscanf(text, "%d", &p) != 1)
            p = -1;
        if (f)
            fclose(f);
        if (p < 0)
            nanosleep(&ms50, NULL);
    }
    ck_assert_int_gt(p, 0);
    return p;
}

/* The step as hvdrun starts it, with the stand-in for srun running then
 * (fake_srun_then); NULL when this machine cannot make one (said why). */
static srun_step *
start_step_then(const char *then)
{
    char err[512];
    sigset_t now;
    srun_step_spec spec = {.nodes = nodes,
                           .n = 2,
                           .whole_allocation = 1,
                           .agent = "hvdrun-srun-agent",
                           .secret = SECRET,
                           .unblock = &now};
    srun_step *made;

    sigprocmask(SIG_SETMASK, NULL, &now);
    fake_srun_then(then);
    made = srun_step_start(&spec, err, sizeof(err));
    if (made == NULL && strstr(err, "no IPv4 address")) {
        printf("skip: %s\n", err); /* (the step needs one to name) */
        return NULL;
    }
    ck_assert_msg(made != NULL, "%s", err);
    return made;
}

static void
setup(void)
{
    if ((st = start_step_then(NULL)) == NULL)
        return;
    port = step_port();
    ck_assert_ptr_nonnull(link0 = hvdrun_link_srun(st, 0));
    ck_assert_ptr_nonnull(link1 = hvdrun_link_srun(st, 1));
}

static void
teardown(void)
{
    hvdrun_link_free(link0); /* the agents see EOF and end */
    hvdrun_link_free(link1);
    srun_step_forget(st);
    link0 = link1 = NULL;
    st = NULL;
    /* (NULL accepted) */ /* SIGTERM to "srun", waited for */
    if (dir[0]) {
        char path[128];
        snprintf(path, sizeof(path), "%s/srun", dir);
        unlink(path);
        snprintf(path, sizeof(path), "%s/link", dir);
        unlink(path);
        rmdir(dir);
    }
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < 100 && agents[i] > 0; k++) {
            struct timespec ms50 = {0, 50 * 1000 * 1000};
            if (waitpid(agents[i], NULL, WNOHANG) == agents[i])
                agents[i] = 0;
            else
                nanosleep(&ms50, NULL);
        }
        if (agents[i] > 0) {
            kill(agents[i], SIGKILL);
            waitpid(agents[i], NULL, 0);
        }
    }
}

/* Node i's hvdrun-srun-agent, as srun would run it there. */
static pid_t
start_node(int i)
{
    pid_t pid = fork();

    if (pid == 0) {
        char link[64];
        signal(SIGTERM, SIG_DFL);
        snprintf(link, sizeof(link), "%d 127.0.0.1", port);
        setenv("HVDRUN_SRUN_LINK", link, 1);
        setenv("HVDRUN_SRUN_SECRET", SECRET, 1);
        setenv("SLURMD_NODENAME", nodes[i], 1);
        unsetenv("SLURM_SRUN_COMM_HOST");
        alarm(60);
        execl(HVD_BIN_DIR "/hvdrun-srun-agent", "hvdrun-srun-agent",
              (char *)NULL);
        _exit(127);
    }
    ck_assert_int_gt(pid, 0);
    return pid;
}

static int
connected(int node)
{
    for (int k = 0; k < SRUN_STREAMS; k++)
        if (srun_step_fd(st, (size_t)node, k) < 0)
            return 0;
    return 1;
}

START_TEST(a_node_finished_by_another_nodes_advance_is_ready)
{
    if (st == NULL)
        return; /* skipped: said why */
    struct pollfd p = {srun_step_pollfd(st), POLLIN, 0};

    ck_assert_int_eq(hvdrun_link_ready(link0), 0); /* nobody came yet */
    agents[0] = start_node(0);
    agents[1] = start_node(1);
    /* only node 1's link is served, as the fleet serves it (advanced,
     * then read once open): node 0's handshakes finish inside its calls
     * (at most 10 s) */
    for (int i = 0; i < 200 && !(connected(0) && hvdrun_link_is_open(link1));
         i++) {
        char buf[256];
        poll(&p, 1, 50);
        if (hvdrun_link_is_open(link1))
            ck_assert_int_ne(hvdrun_link_read(link1, 0, buf, sizeof(buf)), 0);
        else
            ck_assert_int_ge(hvdrun_link_advance(link1), 0);
    }
    ck_assert_msg(connected(0), "node 0 never connected (%d %d)",
                  srun_step_done(st), srun_step_code(st));
    ck_assert_int_eq(hvdrun_link_is_open(link1), 1);
    ck_assert_int_eq(hvdrun_link_is_open(link0), 0);
    /* what woke the step for node 0 is consumed: a loop that polls now
     * would sleep, though node 0 can open */
    ck_assert_int_eq(poll(&p, 1, 0), 0);
    ck_assert_int_eq(hvdrun_link_ready(link0), 1);
    ck_assert_int_eq(hvdrun_link_advance(link0), 1);
    ck_assert_int_eq(hvdrun_link_ready(link0), 0); /* open now */
    ck_assert_int_eq(hvdrun_link_ready(link1), 0);
}
END_TEST

/* Every stream sends its small writes at once: without TCP_NODELAY a
 * second answer to a node waited for the ACK of the first, which the
 * node delays 40 ms. */
START_TEST(the_streams_do_not_wait_to_fill_a_segment)
{
    if (st == NULL)
        return; /* skipped: said why */
    struct pollfd p = {srun_step_pollfd(st), POLLIN, 0};

    agents[0] = start_node(0);
    for (int i = 0; i < 200 && !connected(0); i++) {
        poll(&p, 1, 50);
        hvdrun_link_advance(link0);
    }
    ck_assert_msg(connected(0), "node 0 never connected");
    for (int k = 0; k < SRUN_STREAMS; k++) {
        int on = 0;
        socklen_t len = sizeof(on);
        ck_assert_int_eq(getsockopt(srun_step_fd(st, 0, k), IPPROTO_TCP,
                                    TCP_NODELAY, &on, &len),
                         0);
        ck_assert_int_ne(on, 0);
    }
}
END_TEST

/* A connection to the step's port from 127.0.0.<host> that sends
 * nothing: -1 when it cannot be made. */
static int
idle_from(int host)
{
    struct sockaddr_in from = {.sin_family = AF_INET},
                       to = {.sin_family = AF_INET, .sin_port = htons(port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    from.sin_addr.s_addr = htonl(0x7f000000 | (unsigned)host);
    to.sin_addr.s_addr = htonl(0x7f000001);
    if (fd >= 0 && (bind(fd, (struct sockaddr *)&from, sizeof(from)) != 0 ||
                    (connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0 &&
                     errno != EINPROGRESS))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* A stranger's, from 127.0.0.2: an address of loopback no node uses. */
static int
idle_stranger(void)
{
    return idle_from(2);
}

#define STRANGERS 450

/* Strangers that connect and send nothing, made again whenever hvdrun
 * drops them, more than every handshake slot and the backlog together:
 * they held every slot for 10 s, the node's agent could not connect
 * within its own 5 s and the job failed. A node's handshake now takes the
 * place of the oldest stranger's, and one address holds few slots. */
START_TEST(idle_strangers_do_not_keep_a_node_out)
{
    if (st == NULL)
        return; /* skipped: said why */
    struct pollfd p = {srun_step_pollfd(st), POLLIN, 0};
    static int fd[STRANGERS];
    int made = 0;

    /* they take every slot first, a few at a time (the backlog holds
     * 128: more at once wait for SYN retries, seconds away) */
    for (int k = 0; k < STRANGERS; k++) {
        made += (fd[k] = idle_stranger()) >= 0;
        if (k % 16 == 15) {
            poll(&p, 1, 10);
            hvdrun_link_advance(link1);
        }
    }
    ck_assert_int_gt(made, 400);
    agents[0] = start_node(0);
    for (int i = 0; i < 160 && !connected(0); i++) {
        poll(&p, 1, 50);
        hvdrun_link_advance(link0);
        for (int k = 0; k < STRANGERS; k++) { /* dropped: made again */
            char c;
            if (fd[k] >= 0 &&
                recv(fd[k], &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
                close(fd[k]);
                fd[k] = idle_stranger();
            }
        }
    }
    for (int k = 0; k < STRANGERS; k++)
        if (fd[k] >= 0)
            close(fd[k]);
    ck_assert_msg(connected(0), "node 0 never connected past the strangers");
}
END_TEST

#define FAST_HELD 3000
#define FAST_PER_10MS 8

/* One address that connects 800 times a second and holds every
 * connection: it kept every handshake slot young (none idle to give way)
 * and the backlog full behind them, and the node's agent, starting 3 s
 * in, waited behind thousands: in runs of this test it came 4-6 s later
 * or never (its SYNs dropped from the full backlog until it gave up). One
 * address now holds few slots at once, and its connections beyond them
 * are refused as they come: the node must come within the flood's next
 * 2 s (it takes milliseconds). */
START_TEST(a_fast_stranger_does_not_keep_a_node_out)
{
    if (st == NULL)
        return; /* skipped: said why */
    struct timespec ms10 = {0, 10 * 1000 * 1000};
    struct rlimit rl;
    static int fd[FAST_HELD];
    int next = 0, made = 0;

    /* room for the stranger's connections beside the step's */
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < FAST_HELD + 512) {
        printf("skip: a_fast_stranger_does_not_keep_a_node_out needs %d "
               "descriptors (hard limit %llu)\n",
               FAST_HELD + 512, (unsigned long long)rl.rlim_max);
        return;
    }
    if (rl.rlim_cur < FAST_HELD + 512) {
        rl.rlim_cur = FAST_HELD + 512;
        ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    }
    for (int k = 0; k < FAST_HELD; k++)
        fd[k] = -1;
    for (int i = 0; i < 500 && !connected(0); i++) {
        for (int j = 0; j < FAST_PER_10MS; j++) {
            if (fd[next] >= 0)
                close(fd[next]);
            made += (fd[next] = idle_stranger()) >= 0;
            next = (next + 1) % FAST_HELD;
        }
        if (i == 300) /* the flood 2400 connections in */
            agents[0] = start_node(0);
        nanosleep(&ms10, NULL); /* (the port is always readable) */
        hvdrun_link_advance(link0);
    }
    for (int k = 0; k < FAST_HELD; k++)
        if (fd[k] >= 0)
            close(fd[k]);
    ck_assert_int_ge(made, 2400);
    ck_assert_msg(connected(0), "node 0 never connected past the stranger");
}
END_TEST

#define SAME_ADDR 16

/* Connections that send nothing from the nodes' own address (a stranger
 * on a node, or other nodes behind one address), 16 at a time and
 * always young, for the node's agent's first half second: hvdrun refuses
 * its connections beyond them, and the agent tries again until it is
 * in. It gave up at the first refusal. */
START_TEST(a_node_refused_for_its_address_tries_again)
{
    if (st == NULL)
        return; /* skipped: said why */
    struct timespec ms10 = {0, 10 * 1000 * 1000};
    int fd[SAME_ADDR];

    for (int k = 0; k < SAME_ADDR; k++)
        fd[k] = -1;
    for (int i = 0; i < 500 && !connected(0); i++) {
        for (int k = 0; i % 5 == 0 && k < SAME_ADDR; k++) {
            if (fd[k] >= 0)
                close(fd[k]);
            fd[k] = i < 60 ? idle_from(1) : -1; /* 127.0.0.1, the nodes' */
        }
        hvdrun_link_advance(link0);
        if (i == 10)
            agents[0] = start_node(0);
        nanosleep(&ms10, NULL);
    }
    for (int k = 0; k < SAME_ADDR; k++)
        if (fd[k] >= 0)
            close(fd[k]);
    ck_assert_msg(connected(0), "node 0 never connected");
    ck_assert_int_eq(waitpid(agents[0], NULL, WNOHANG), 0); /* it runs */
}
END_TEST

/* A line from fd, the step served meanwhile (up to 5 s); 0 or -1. */
static int
step_line(int fd, char *line, size_t n)
{
    size_t len = 0;

    for (int i = 0; i < 500 && !memchr(line, '\n', len); i++) {
        struct timespec ms10 = {0, 10 * 1000 * 1000};
        ssize_t got = recv(fd, line + len, n - 1 - len, MSG_DONTWAIT);
        if (got > 0)
            len += (size_t)got;
        else if (got == 0)
            return -1;
        srun_step_poll(st);
        nanosleep(&ms10, NULL);
    }
    line[len] = '\0';
    return memchr(line, '\n', len) ? 0 : -1;
}

/* An agent on node 0 whose stdio stream made its whole handshake (hvdrun
 * took it) and whose other streams failed at that address: it closes
 * them all and goes to the next address. The stream hvdrun took is the
 * dead one, and the node's new stream must take its place: it was refused
 * ("that node's stream is already connected"), and the node never came. */
START_TEST(a_node_that_tries_again_after_half_a_handshake_is_taken)
{
    if (st == NULL)
        return; /* skipped: said why */
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
    char hello[SRUN_AUTH_LINE], answer[SRUN_AUTH_LINE], proof[SRUN_AUTH_LINE],
        expect[65], where[80];
    struct pollfd p = {srun_step_pollfd(st), POLLIN, 0};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
    ck_assert_int_eq(step_line(fd, hello, sizeof(hello)), 0);
    ck_assert_int_eq(srun_auth_where(fd, 1, where, sizeof(where)), 0);
    ck_assert_int_eq(srun_auth_answer(SECRET, hello, nodes[0], SRUN_STDIO,
                                      where, answer, sizeof(answer), expect),
                     0);
    ck_assert_int_eq(send(fd, answer, strlen(answer), MSG_NOSIGNAL),
                     (ssize_t)strlen(answer));
    ck_assert_int_eq(step_line(fd, proof, sizeof(proof)), 0);
    ck_assert_int_ge(srun_step_fd(st, 0, SRUN_STDIO), 0); /* hvdrun took it */
    struct sockaddr_in mine, theirs;
    socklen_t len = sizeof(mine);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&mine, &len), 0);
    close(fd);
    agents[0] = start_node(0);
    for (int i = 0; i < 200 && !connected(0); i++) {
        poll(&p, 1, 50);
        ck_assert_int_ge(hvdrun_link_advance(link0), 0);
    }
    ck_assert_msg(connected(0), "node 0 never connected");
    /* its stdio is the agent's new stream, not the dead one, and the agent
     * runs (refused, it gave up, and hvdrun held a dead stdio) */
    len = sizeof(theirs);
    ck_assert_int_eq(getpeername(srun_step_fd(st, 0, SRUN_STDIO),
                                 (struct sockaddr *)&theirs, &len),
                     0);
    ck_assert_int_ne(theirs.sin_port, mine.sin_port);
    ck_assert_int_eq(waitpid(agents[0], NULL, WNOHANG), 0);
    ck_assert_int_eq(hvdrun_link_advance(link0), 1);
}
END_TEST

/* How srun ended, and whether hvdrun takes it for Slurm's cancel:
 * - Slurm stopping the step itself (scancel, a time limit, a failed
 *   node): srun says "Job step aborted" at once, and slurmstepd's
 *   "CANCELLED" did not always come before srun ended (netlab.slurm's
 *   scancel on a loaded machine, 2 of 10: hvdrun said "job failed on
 *   h2"). Either is the cancel.
 * - srun ending the step itself after an agent's bad exit
 *   (--kill-on-bad-exit) says "Job step aborted" too, after it named the
 *   task: the job failing, not the cancel. */
static const struct {
    const char *then;
    int code, cancelled;
} endings[] = {
    {"echo 'srun: Job step aborted: Waiting up to 7 seconds for job step "
     "to finish.' >&2; exit 143",
     143, 1},
    {"echo 'slurmstepd: error: *** STEP 5.0 ON n0 CANCELLED AT "
     "2026-12-05T12:00:00 ***' >&2; exit 143",
     143, 1},
    {"echo 'srun: error: n1: task 1: Exited with exit code 3' >&2; "
     "echo 'srun: launch/slurm: _step_signal: Terminating StepId=5.0' >&2; "
     "echo 'srun: Job step aborted: Waiting up to 7 seconds for job step "
     "to finish.' >&2; exit 3",
     3, 0},
};

START_TEST(how_srun_ended)
{
    srun_step *ended = start_step_then(endings[_i].then);

    if (ended == NULL)
        return; /* skipped: said why */
    for (int i = 0; i < 500 && !srun_step_done(ended); i++) {
        struct timespec ms10 = {0, 10 * 1000 * 1000};
        srun_step_poll(ended);
        nanosleep(&ms10, NULL);
    }
    ck_assert(srun_step_done(ended));
    ck_assert_int_eq(srun_step_code(ended), endings[_i].code);
    ck_assert_int_eq(srun_step_cancelled(ended), endings[_i].cancelled);
    srun_step_free(ended);
}
END_TEST

/* An agent whose hvdrun is gone (nothing listens at its port) ends at
 * once: it tries again only where hvdrun closed a connection or did not
 * answer */
START_TEST(a_node_with_no_hvdrun_ends_at_once)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), status = 0;
    pid_t done = 0;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    port = ntohs(a.sin_port);
    close(fd); /* a port nothing listens at */
    agents[0] = start_node(0);
    for (int i = 0; i < 300 && done == 0; i++) { /* 3 s */
        struct timespec ms10 = {0, 10 * 1000 * 1000};
        if ((done = waitpid(agents[0], &status, WNOHANG)) == 0)
            nanosleep(&ms10, NULL);
    }
    ck_assert_msg(done == agents[0], "the agent still runs after 3 s");
    agents[0] = 0;
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 69); /* HVD_EXIT_LAUNCH */
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("link_srun");
    TCase *tc = tcase_create("ready");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    ADD(tc, a_node_finished_by_another_nodes_advance_is_ready);
    ADD(tc, the_streams_do_not_wait_to_fill_a_segment);
    ADD(tc, idle_strangers_do_not_keep_a_node_out);
    ADD(tc, a_fast_stranger_does_not_keep_a_node_out);
    ADD(tc, a_node_refused_for_its_address_tries_again);
    ADD(tc, a_node_that_tries_again_after_half_a_handshake_is_taken);
    suite_add_tcase(s, tc);
    tc = tcase_create("outcome");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, how_srun_ended, 0,
                        sizeof(endings) / sizeof(endings[0]));
    ADD(tc, a_node_with_no_hvdrun_ends_at_once);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
