/* hvdd: the rendezvous daemon. Started by hvdrun for every job, or on its
 * own for workers that something else starts. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "hvd_exit.h"
#include "hvdd_token.h"
#include "options.h"
#include "server.h"

static int use_syslog;

static void
say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    if (use_syslog) {
        vsyslog(LOG_NOTICE, fmt, ap);
    } else {
        fputs("hvdd: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
    }
    va_end(ap);
}

static void
log_cb(void *arg, const char *line)
{
    (void)arg;
    say("%s", line);
}

/* hvdrun reads hvdd's stdout: "listening PORT", then "abort REASON"
 * and "warn LINE" lines. */
static void
on_abort(void *arg, const char *reason)
{
    const hvdd_opts *o = arg;

    if (!use_syslog) {
        printf("abort %s\n", reason);
        fflush(stdout);
    }
    if (!o->token_stdin || o->debug) /* else hvdrun tells the user */
        say("job aborted: %s", reason);
}

/* A rank's warning: "warn LINE" per line, for hvdrun to print. */
static void
on_warn(void *arg, const char *text)
{
    const hvdd_opts *o = arg;
    const char *p = text;

    while (!use_syslog && *p) {
        size_t n = strcspn(p, "\n");
        printf("warn %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
    fflush(stdout);
    if (!o->token_stdin || o->debug)
        say("warning: %s", text);
}

/* Reads the token file, or creates it (mode 0600) with a fresh token. */
static int
token_from_file(const char *path, char *token)
{
    char buf[HVDD_TOKEN_LEN + 2] = "";
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), r;
    FILE *f;

    if (fd >= 0) {
        int ok = hvdd_token_new(token) == 0 &&
                 write(fd, token, HVDD_TOKEN_LEN) == HVDD_TOKEN_LEN &&
                 write(fd, "\n", 1) == 1;
        close(fd);
        if (ok)
            say("wrote a new job token to '%s'", path);
        return ok ? 0 : -1;
    }
    if (errno != EEXIST || (f = fopen(path, "re")) == NULL) {
        fprintf(stderr, "hvdd: cannot open token file '%s': %s\n", path,
                strerror(errno));
        return -1;
    }
    if (fgets(buf, sizeof(buf), f) == NULL)
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
    r = hvdd_token_valid(buf) ? 0 : -1;
    if (r == 0)
        memcpy(token, buf, HVDD_TOKEN_LEN + 1);
    else
        fprintf(stderr, "hvdd: token file '%s' does not hold %d hex digits\n",
                path, HVDD_TOKEN_LEN);
    explicit_bzero(buf, sizeof(buf));
    return r;
}

static int
token_from_stdin(char *token)
{
    char buf[HVDD_TOKEN_LEN + 2];
    size_t got = 0;
    int r;

    /* Byte by byte: stdin stays open afterwards as the launcher's lifeline,
     * and stdio must not read past the token line. */
    while (got < sizeof(buf) - 1) {
        ssize_t n = read(0, buf + got, 1);
        if (n <= 0 || buf[got] == '\n')
            break;
        got++;
    }
    buf[got] = '\0';
    r = hvdd_token_valid(buf) ? 0 : -1;
    if (r == 0)
        memcpy(token, buf, HVDD_TOKEN_LEN + 1);
    else
        fprintf(stderr, "hvdd: no valid token on standard input\n");
    explicit_bzero(buf, sizeof(buf));
    return r;
}

static int
signal_fd(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    signal(SIGPIPE, SIG_IGN);
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
        return -1;
    return signalfd(-1, &set, SFD_CLOEXEC);
}

/* Serves until a signal, or until stdin closes when it is the launcher's
 * lifeline (--token-stdin). */
static void
serve(int sigfd, int watch_stdin)
{
    struct pollfd p[2] = {{sigfd, POLLIN, 0}, {0, POLLIN, 0}};
    char buf[256];

    for (;;) {
        if (poll(p, watch_stdin ? 2 : 1, -1) < 0 && errno != EINTR)
            return;
        if (p[0].revents)
            return;
        if (watch_stdin && p[1].revents && read(0, buf, sizeof(buf)) <= 0)
            return;
    }
}

/* Standalone without --foreground: detach; the parent reports the port. */
static int
daemonize(int *report_fd)
{
    int p[2], port = 0;
    pid_t pid;

    if (pipe2(p, O_CLOEXEC) != 0 || (pid = fork()) < 0)
        return -1;
    if (pid > 0) {
        close(p[1]);
        if (read(p[0], &port, sizeof(port)) != sizeof(port) || port <= 0)
            exit(HVD_EXIT_LAUNCH);
        printf("listening %d\n", port);
        fprintf(stderr, "hvdd: serving on port %d, pid %d\n", port, (int)pid);
        exit(0);
    }
    close(p[0]);
    setsid();
    *report_fd = p[1];
    openlog("hvdd", LOG_PID, LOG_DAEMON);
    use_syslog = 1;
    return 0;
}

static void
detach_stdio(void)
{
    int fd = open("/dev/null", O_RDWR);

    for (int i = 0; fd >= 0 && i < 3; i++)
        dup2(fd, i);
    if (fd > 2)
        close(fd);
}

/* The job's state from the token and the options: the plan, and the
 * network decision that workers are given. Wipes token, of which st keeps
 * a copy. Returns 0 or an exit code; the caller releases st either way, as
 * after hvdd_state_init. */
static int
job_state(hvdd_state *st, const hvdd_opts *o, char *token)
{
    char err[600];
    hvdd_roster *j = &st->roster;
    int r =
        hvdd_state_init(st, (int)o->size, o->hosts, token, err, sizeof(err));

    explicit_bzero(token, HVDD_TOKEN_LEN + 1);
    if (r != 0) {
        fprintf(stderr, "hvdd: %s\n", err);
        return HVD_EXIT_USAGE;
    }
    st->log = log_cb;
    st->debug = o->debug;
    j->heartbeat_timeout = o->heartbeat_timeout;
    if (o->iface)
        snprintf(j->iface, sizeof(j->iface), "%s", o->iface);
    if (o->master_addr)
        snprintf(j->master_addr, sizeof(j->master_addr), "%s", o->master_addr);
    j->master_port = (int)o->master_port;
    if (o->network_interface)
        snprintf(j->agents.wanted, sizeof(j->agents.wanted), "%s",
                 o->network_interface);
    return 0;
}

/* Whatever stopping takes (held requests to answer, a stuck library),
 * hvdd is gone this many seconds after it was told to stop. */
static void *
watchdog(void *arg)
{
    sleep((unsigned)(uintptr_t)arg);
    _exit(HVD_EXIT_OK);
}

static void
stop_within(unsigned seconds)
{
    pthread_t t;

    if (pthread_create(&t, NULL, watchdog, (void *)(uintptr_t)seconds) == 0)
        pthread_detach(t);
}

static int
run(hvdd_opts *o)
{
    char token[HVDD_TOKEN_LEN + 1], err[600];
    /* a job's own clients from one address: a few per rank (a host's
     * ranks share its address), and standalone rendezvous of thousands
     * on one host; any one address gets no more (hvdrun-ssh's calls, its
     * agents' among them, take the channel, not HTTP) */
    unsigned per_addr = 6 * (o->size > 64 ? (unsigned)o->size : 64) + 64;
    hvdd_server_opts so = {.addr = o->addr,
                           .port = o->port,
                           .listen_fd = o->listen_fd,
                           .channel_fd = o->channel_fd,
                           .allow = o->allow,
                           .max_conns = 16384,
                           .per_addr = per_addr,
                           .on_abort = on_abort,
                           .on_warn = on_warn,
                           .arg = o};
    hvdd_server *srv = NULL;
    hvdd_state st;
    int sigfd = -1, port = 0, report_fd = -1, code;

    if ((o->token_stdin ? token_from_stdin(token)
                        : token_from_file(o->token_file, token)) != 0)
        return HVD_EXIT_CONFIG; /* nothing is held yet */
    if ((code = job_state(&st, o, token)) != 0)
        goto out;
    if (!o->foreground && !o->token_stdin && daemonize(&report_fd) != 0) {
        fprintf(stderr, "hvdd: cannot detach: %s\n", strerror(errno));
        code = HVD_EXIT_LAUNCH;
        goto out;
    }
    if ((sigfd = signal_fd()) < 0 ||
        (srv = hvdd_server_start(&st, &so, &port, err, sizeof(err))) == NULL) {
        say("%s", sigfd < 0 ? "cannot set up signals" : err);
        code = HVD_EXIT_LAUNCH;
        goto out;
    }
    if (report_fd >= 0) {
        if (write(report_fd, &port, sizeof(port)) != sizeof(port))
            say("cannot report the port");
        close(report_fd);
        report_fd = -1;
        detach_stdio();
    } else {
        printf("listening %d\n", port);
        fflush(stdout);
    }
    if (o->debug)
        say("serving a job of %ld ranks on %s:%d", o->size, o->addr, port);
    serve(sigfd, o->token_stdin);
    stop_within(2);
out:
    hvdd_server_stop(srv);
    hvdd_state_release(&st);
    if (report_fd >= 0)
        close(report_fd);
    if (sigfd >= 0)
        close(sigfd);
    return code;
}

int
main(int argc, char **argv)
{
    hvdd_opts o;
    int done, code = hvdd_opts_parse(argc, argv, &o, &done);

    if (code == 0 && !done)
        code = run(&o);
    hvdd_opts_release(&o);
    return code;
}
