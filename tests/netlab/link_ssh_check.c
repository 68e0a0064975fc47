/* link_ssh_check HOST: what an SSH link takes off its socket without
 * handing it over. libssh2 moves every packet that arrived into its own
 * queue whenever a call reads the socket: a read of stderr takes stdout's
 * data in too, and a write takes in the remote command's last output and
 * its EOF. The socket is then empty, so poll says nothing, and the link
 * must say so itself (hvdrun_link_ready): else the fleet sleeps with an
 * agent's line in hand, up to its loop's 100 ms.
 * The remote command (root over the lab's keys, port 22) prints "out",
 * then "err" on stderr, and later "late" before it exits with 3. Prints
 * "ok - ..." or "not ok - ..." per check; exits 1 when one failed. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_link.h"
#include "hvd_clock.h"

static int failed;

static void
check(const char *what, int good)
{
    printf("%s - %s\n", good ? "ok" : "not ok", what);
    failed |= !good;
}

/* 1 when the link's socket has nothing to read now */
static int
socket_quiet(hvdrun_link *l)
{
    short ev;
    struct pollfd p = {hvdrun_link_pollfd(l, 0, &ev), POLLIN, 0};

    return poll(&p, 1, 0) == 0;
}

static void
wait_socket(hvdrun_link *l, int ms)
{
    short ev;
    struct pollfd p = {hvdrun_link_pollfd(l, 0, &ev), 0, 0};

    p.events = ev;
    poll(&p, 1, ms);
}

/* Reads stream until it gives text (bounded: 10 s), polling between
 * reads; what it read in buf. */
static ssize_t
read_until_data(hvdrun_link *l, int stream, char *buf, size_t n)
{
    double end = hvd_mono_now() + 10;
    ssize_t r = -1;

    while (hvd_mono_now() < end &&
           (r = hvdrun_link_read(l, stream, buf, n - 1)) < 0)
        wait_socket(l, 100);
    buf[r > 0 ? r : 0] = '\0';
    return r;
}

static hvdrun_link *
open_link(const char *host, const char *command)
{
    const char *home = getenv("HOME");
    char id[512], known[512];
    double end = hvd_mono_now() + 20;
    hvdrun_link *l;
    int r = 0;

    snprintf(id, sizeof(id), "%s/.ssh/id_ed25519", home);
    snprintf(known, sizeof(known), "%s/.ssh/known_hosts", home);
    ssh_target t = {.host = host,
                    .port = 22,
                    .user = "root",
                    .identity_file = id,
                    .known_hosts = known,
                    .timeout = 10};
    if ((l = hvdrun_link_ssh(&t, command)) == NULL)
        return NULL;
    while (hvd_mono_now() < end && (r = hvdrun_link_advance(l)) == 0)
        wait_socket(l, 100);
    if (r != 1) {
        fprintf(stderr, "link_ssh_check: %s: %s: %s\n", host,
                hvdrun_link_step(l), hvdrun_link_error(l));
        hvdrun_link_free(l);
        return NULL;
    }
    return l;
}

int
main(int argc, char **argv)
{
    char buf[256];
    hvdrun_link *l;
    double end;

    if (argc != 2 || hvdrun_links_begin() != 0)
        return 2;
    l = open_link(argv[1], "printf 'out\\n'; sleep 0.5; printf 'err\\n' >&2; "
                           "sleep 1; printf 'late\\n'; exit 3");
    if (l == NULL)
        return 1;

    /* stderr's line comes half a second after stdout's, which the reads
     * of stderr meanwhile took off the socket */
    read_until_data(l, 1, buf, sizeof(buf));
    check("stderr's line is read", strcmp(buf, "err\n") == 0);
    check("stdout's line, already taken in, leaves the socket quiet",
          socket_quiet(l));
    check("the link says it has input poll cannot see", hvdrun_link_ready(l));
    check("stdout's line is there to read",
          hvdrun_link_read(l, 0, buf, sizeof(buf) - 1) == 4 &&
              memcmp(buf, "out\n", 4) == 0);
    check("with nothing taken in, the link says nothing",
          !hvdrun_link_ready(l));

    /* the command's last line and its end arrive; a write takes them in */
    wait_socket(l, 5000);
    usleep(300 * 1000); /* (the EOF and the close follow "late" at once) */
    hvdrun_link_send(l, "x\n", 2);
    check("a write takes in the command's end, leaving the socket quiet",
          socket_quiet(l));
    check("after the write, the link says it has input", hvdrun_link_ready(l));
    check("the last line is there to read",
          read_until_data(l, 0, buf, sizeof(buf)) > 0 &&
              strcmp(buf, "late\n") == 0);
    end = hvd_mono_now() + 10;
    while (hvd_mono_now() < end && !hvdrun_link_reap(l)) {
        while (hvdrun_link_read(l, 0, buf, sizeof(buf)) > 0 ||
               hvdrun_link_read(l, 1, buf, sizeof(buf)) > 0)
            ;
        if (!hvdrun_link_reap(l))
            wait_socket(l, 100);
    }
    check("the command's exit code (3) is collected",
          hvdrun_link_reap(l) && hvdrun_link_code(l) == 3);
    check("an ended link says nothing", !hvdrun_link_ready(l));
    hvdrun_link_free(l);
    hvdrun_links_end();
    return failed;
}
