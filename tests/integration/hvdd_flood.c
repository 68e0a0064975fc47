/* What a stranger can throw at hvdd's port, for hvdd_abuse.sh: many
 * connections from several loopback addresses, held open for a while.
 * usage: hvdd_flood PORT MODE COUNT SECONDS SRC...
 *   MODE open    connect and send nothing
 *        slow    a request line, then one header line every 5 s, never
 *                the end of the headers (slowloris)
 *        upload  a PUT that announces 1 MiB and sends 64 KiB of it
 * Connections go round the source addresses SRC (127.0.0.2 ...). Prints
 * "opened N of COUNT" once they are up and "held S s" at the end; every
 * loop is bounded by COUNT and SECONDS. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hvd_clock.h"

static const char *mode;
static char upload[65536 + 256];

static void
raise_limit(int want)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rl.rlim_cur =
        (rlim_t)want + 64 < rl.rlim_max ? (rlim_t)want + 64 : rl.rlim_max;
    if (rl.rlim_cur < (rlim_t)want + 64) /* root may raise the hard limit */
        rl.rlim_max = rl.rlim_cur = (rlim_t)want + 64;
    setrlimit(RLIMIT_NOFILE, &rl);
}

/* A non-blocking connect from src to 127.0.0.1:port; the fd or -1. */
static int
dial(const char *src, int port)
{
    struct sockaddr_in from = {.sin_family = AF_INET}, to = from;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    inet_pton(AF_INET, src, &from.sin_addr);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    to.sin_port = htons((unsigned short)port);
    if (bind(fd, (struct sockaddr *)&from, sizeof(from)) != 0 ||
        (connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0 &&
         errno != EINPROGRESS)) {
        close(fd);
        return -1;
    }
    return fd;
}

static void
say_first(int fd)
{
    const char *line = "GET /global/slow HTTP/1.1\r\nHost: x\r\n";

    if (strcmp(mode, "slow") == 0)
        (void)!send(fd, line, strlen(line), MSG_NOSIGNAL);
    else if (strcmp(mode, "upload") == 0)
        (void)!send(fd, upload, strlen(upload) + 65536, MSG_NOSIGNAL);
}

int
main(int argc, char **argv)
{
    int port, count, nsrc, opened = 0, *fds;
    double seconds, start, next_line;

    if (argc < 6) {
        fprintf(stderr, "usage: hvdd_flood PORT MODE COUNT SECONDS SRC...\n");
        return 2;
    }
    port = (int)strtol(argv[1], NULL, 10);
    mode = argv[2];
    count = (int)strtol(argv[3], NULL, 10);
    seconds = strtod(argv[4], NULL);
    nsrc = argc - 5;
    snprintf(upload, sizeof(upload),
             "PUT /global/big HTTP/1.1\r\nHost: x\r\nContent-Length: "
             "1048576\r\n\r\n");
    memset(upload + strlen(upload), 'x', 65536);
    raise_limit(count);
    if ((fds = calloc((size_t)count, sizeof(*fds))) == NULL)
        return 1;
    start = hvd_mono_now();
    for (int i = 0; i < count && hvd_mono_now() - start < seconds; i++) {
        if ((fds[i] = dial(argv[5 + i % nsrc], port)) >= 0)
            opened++;
        if (i % 256 == 255) /* let the handshakes happen */
            poll(NULL, 0, 1);
    }
    /* what each says once connected */
    poll(NULL, 0, 200);
    for (int i = 0; i < count; i++)
        if (fds[i] > 0)
            say_first(fds[i]);
    printf("opened %d of %d\n", opened, count);
    fflush(stdout);
    next_line = hvd_mono_now() + 5;
    while (hvd_mono_now() - start < seconds) {
        poll(NULL, 0, 100);
        if (strcmp(mode, "slow") != 0 || hvd_mono_now() < next_line)
            continue;
        next_line += 5;
        for (int i = 0; i < count; i++)
            if (fds[i] > 0)
                (void)!send(fds[i], "X-a: b\r\n", 8, MSG_NOSIGNAL);
    }
    printf("held %.0f s\n", hvd_mono_now() - start);
    return 0;
}
