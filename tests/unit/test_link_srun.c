/* link_srun.c over a real srun_step: every node's handshakes go through
 * the one step, so advancing one node's link can finish another's, whose
 * wake-up is then gone from the step's poll fd. hvdrun_link_ready says
 * such a link can open now (the fleet then does not sleep before it);
 * without it a node's brief waited for the next unrelated event, up to
 * the loop's 100 ms. The nodes are the real hvdrun-srun-agent (with the
 * real hvdrun-agent behind it); srun's part is only its pid and pipes,
 * handed over as hvdrun hands them to hvdrun-ssh. The streams also go
 * without Nagle's wait. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_link.h"
#include "srun_step.h"
#include "unit.h"

#define SECRET                                                                 \
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char *const nodes[] = {"n0", "n1"};
static srun_step *st;
static hvdrun_link *link0, *link1;
static pid_t srun_pid, agents[2];
static int port;

static int
listener(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(fd, 16), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    port = ntohs(a.sin_port);
    return fd;
}

/* The step as hvdrun-ssh adopts it: a listener, srun's stdout and
 * stderr, the secret in a pipe, and a child standing for srun. */
static void
setup(void)
{
    int o[2], e[2], s[2], lfd = listener();
    char handover[128], err[256];
    srun_step_spec spec = {
        .nodes = nodes, .n = 2, .whole_allocation = 1, .secret = ""};

    ck_assert_int_eq(pipe2(o, O_NONBLOCK), 0); /* as hvdrun makes them */
    ck_assert_int_eq(pipe2(e, O_NONBLOCK), 0);
    ck_assert_int_eq(pipe(s), 0);
    ck_assert_int_eq(write(s[1], SECRET, strlen(SECRET)), strlen(SECRET));
    close(s[1]);
    if ((srun_pid = fork()) == 0) {
        signal(SIGTERM, SIG_DFL); /* not Check's handler */
        alarm(60);                /* gone even if the test is */
        pause();
        _exit(0);
    }
    ck_assert_int_gt(srun_pid, 0);
    snprintf(handover, sizeof(handover), "%d %d %d %d %d", lfd, o[0], e[0],
             s[0], (int)srun_pid);
    ck_assert_msg((st = srun_step_adopt(&spec, handover, err, sizeof(err))),
                  "%s", err);
    close(o[1]); /* srun writes nothing: the step's fd wakes for nodes only */
    close(e[1]);
    ck_assert_ptr_nonnull(link0 = hvdrun_link_srun(st, 0));
    ck_assert_ptr_nonnull(link1 = hvdrun_link_srun(st, 1));
}

static void
teardown(void)
{
    hvdrun_link_free(link0); /* the agents see EOF and end */
    hvdrun_link_free(link1);
    srun_step_forget(st); /* SIGTERM to "srun", waited for */
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

static Suite *
suite(void)
{
    Suite *s = suite_create("link_srun");
    TCase *tc = tcase_create("ready");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    ADD(tc, a_node_finished_by_another_nodes_advance_is_ready);
    ADD(tc, the_streams_do_not_wait_to_fill_a_segment);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
