/* hvdd: the rendezvous daemon. Started by hvdrun for every job, or on its
 * own for workers that something else starts. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "hvd_exit.h"
#include "hvd_numbers.h"
#include "server.h"
#include "hvdd_token.h"

typedef struct opts {
    char addr[64];
    int port;
    int listen_fd;
    long size;
    const char *hosts;
    const char *token_file;
    int token_stdin;
    char *allow_buf;
    const char *allow[257];
    double heartbeat_timeout;
    const char *iface, *master_addr, *network_interface;
    long master_port;
    int debug, foreground;
} opts;

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

/* hvdrun reads hvdd's stdout: "listening PORT", then "abort REASON". */
static void
on_abort(void *arg, const char *reason)
{
    const opts *o = arg;

    if (!use_syslog) {
        printf("abort %s\n", reason);
        fflush(stdout);
    }
    if (!o->token_stdin || o->debug) /* else hvdrun tells the user */
        say("job aborted: %s", reason);
}

static void
usage(FILE *f)
{
    fprintf(
        f,
        "usage: hvdd --size N [--listen ADDR:PORT | --listen-fd FD]\n"
        "            [--hosts HOST:N,...]\n"
        "            [--token-file FILE | --token-stdin] [--allow ADDR,...]\n"
        "            [--heartbeat-timeout S] [--iface NAME]\n"
        "            [--network-interface NAME[,NAME]|CIDR]\n"
        "            [--master-addr ADDR] [--master-port PORT] [-d]\n"
        "            [--foreground]\n"
        "The rendezvous daemon of hvdrun jobs; see hvdd(8).\n");
}

static int
usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "hvdd: %s '%s'\ntry 'hvdd --help'\n", msg, arg);
    return HVD_EXIT_USAGE;
}

/* "ADDR:PORT", "[v6]:PORT" or ":PORT". */
static int
parse_listen(const char *s, opts *o)
{
    const char *colon = strrchr(s, ':');
    long port;

    if (colon == NULL || hvd_parse_long(colon + 1, 0, 65535, &port) != 0)
        return -1;
    if (s[0] == '[' && colon > s && colon[-1] == ']')
        snprintf(o->addr, sizeof(o->addr), "%.*s", (int)(colon - s - 2), s + 1);
    else
        snprintf(o->addr, sizeof(o->addr), "%.*s", (int)(colon - s), s);
    o->port = (int)port;
    return 0;
}

static int
split_allow(opts *o, const char *list)
{
    int n = 0;

    free(o->allow_buf);
    if ((o->allow_buf = strdup(list)) == NULL)
        return -1;
    for (char *save = NULL, *a = strtok_r(o->allow_buf, ",", &save);
         a && n < 256; a = strtok_r(NULL, ",", &save))
        o->allow[n++] = a;
    o->allow[n] = NULL;
    return 0;
}

static int
parse_args(int argc, char **argv, opts *o, int *done)
{
    enum {
        O_SIZE = 256,
        O_LISTEN_FD,
        O_HOSTS,
        O_TOKEN_FILE,
        O_TOKEN_STDIN,
        O_ALLOW,
        O_HEARTBEAT,
        O_IFACE,
        O_NETIF,
        O_MADDR,
        O_MPORT,
        O_FG,
        O_VERSION
    };
    static const struct option longs[] = {
        {"listen", required_argument, NULL, 'l'},
        {"listen-fd", required_argument, NULL, O_LISTEN_FD},
        {"size", required_argument, NULL, O_SIZE},
        {"hosts", required_argument, NULL, O_HOSTS},
        {"token-file", required_argument, NULL, O_TOKEN_FILE},
        {"token-stdin", no_argument, NULL, O_TOKEN_STDIN},
        {"allow", required_argument, NULL, O_ALLOW},
        {"heartbeat-timeout", required_argument, NULL, O_HEARTBEAT},
        {"iface", required_argument, NULL, O_IFACE},
        {"network-interface", required_argument, NULL, O_NETIF},
        {"master-addr", required_argument, NULL, O_MADDR},
        {"master-port", required_argument, NULL, O_MPORT},
        {"foreground", no_argument, NULL, O_FG},
        {"version", no_argument, NULL, O_VERSION},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;

    snprintf(o->addr, sizeof(o->addr), "0.0.0.0");
    o->listen_fd = -1;
    while ((c = getopt_long(argc, argv, "dhl:", longs, NULL)) != -1) {
        switch (c) {
        case 'l':
            if (parse_listen(optarg, o) != 0)
                return usage_error("--listen wants ADDR:PORT, not", optarg);
            break;
        case O_LISTEN_FD: {
            long fd;
            if (hvd_parse_long(optarg, 0, 65535, &fd) != 0)
                return usage_error("--listen-fd wants a descriptor, not",
                                   optarg);
            o->listen_fd = (int)fd;
            break;
        }
        case O_SIZE:
            if (hvd_parse_long(optarg, 1, 1 << 20, &o->size) != 0)
                return usage_error("--size wants a number >= 1, not", optarg);
            break;
        case O_HOSTS:
            o->hosts = optarg;
            break;
        case O_TOKEN_FILE:
            o->token_file = optarg;
            break;
        case O_TOKEN_STDIN:
            o->token_stdin = 1;
            break;
        case O_ALLOW:
            if (split_allow(o, optarg) != 0)
                return HVD_EXIT_USAGE;
            break;
        case O_HEARTBEAT:
            if (hvd_parse_double(optarg, 0, 1e6, &o->heartbeat_timeout) != 0)
                return usage_error("--heartbeat-timeout wants seconds, not",
                                   optarg);
            break;
        case O_NETIF:
            o->network_interface = optarg;
            break;
        case O_IFACE:
            o->iface = optarg;
            break;
        case O_MADDR:
            o->master_addr = optarg;
            break;
        case O_MPORT:
            if (hvd_parse_long(optarg, 0, 65535, &o->master_port) != 0)
                return usage_error("--master-port wants a port, not", optarg);
            break;
        case 'd':
            o->debug = 1;
            break;
        case O_FG:
            o->foreground = 1;
            break;
        case O_VERSION:
            printf("hvdd %s\n", HVD_VERSION);
            return *done = 1, 0;
        case 'h':
            usage(stdout);
            return *done = 1, 0;
        default:
            fprintf(stderr, "try 'hvdd --help'\n");
            return HVD_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument", argv[optind]);
    if (o->size == 0) {
        fprintf(stderr, "hvdd: --size N is required\ntry 'hvdd --help'\n");
        return HVD_EXIT_USAGE;
    }
    if (!o->token_stdin && o->token_file == NULL) {
        fprintf(stderr, "hvdd: give --token-file FILE (created with a fresh "
                        "token when missing) or --token-stdin\n");
        return HVD_EXIT_USAGE;
    }
    return 0;
}

/* Reads the token file, or creates it (mode 0600) with a fresh token. */
static int
token_from_file(const char *path, char *token)
{
    char buf[HVDD_TOKEN_LEN + 2] = "";
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
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
    if (!hvdd_token_valid(buf)) {
        fprintf(stderr, "hvdd: token file '%s' does not hold %d hex digits\n",
                path, HVDD_TOKEN_LEN);
        return -1;
    }
    memcpy(token, buf, HVDD_TOKEN_LEN + 1);
    return 0;
}

static int
token_from_stdin(char *token)
{
    char buf[HVDD_TOKEN_LEN + 2];
    size_t got = 0;

    /* Byte by byte: stdin stays open afterwards as the launcher's lifeline,
     * and stdio must not read past the token line. */
    while (got < sizeof(buf) - 1) {
        ssize_t n = read(0, buf + got, 1);
        if (n <= 0 || buf[got] == '\n')
            break;
        got++;
    }
    buf[got] = '\0';
    if (!hvdd_token_valid(buf)) {
        fprintf(stderr, "hvdd: no valid token on standard input\n");
        return -1;
    }
    memcpy(token, buf, HVDD_TOKEN_LEN + 1);
    return 0;
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

static int
run(opts *o)
{
    char token[HVDD_TOKEN_LEN + 1], err[600];
    hvdd_server_opts so = {o->addr,  o->port, o->listen_fd, o->allow, 16384,
                           on_abort, o};
    hvdd_server *srv = NULL;
    hvdd_state st;
    int sigfd, port = 0, report_fd = -1, code = 0;

    if ((o->token_stdin ? token_from_stdin(token)
                        : token_from_file(o->token_file, token)) != 0)
        return HVD_EXIT_CONFIG;
    if (hvdd_state_init(&st, (int)o->size, o->hosts, token, err, sizeof(err)) !=
        0) {
        fprintf(stderr, "hvdd: %s\n", err);
        hvdd_state_release(&st);
        return HVD_EXIT_USAGE;
    }
    memset(token, 0, sizeof(token));
    st.log = log_cb;
    st.debug = o->debug;
    st.roster.heartbeat_timeout = o->heartbeat_timeout;
    if (o->iface)
        snprintf(st.roster.iface, sizeof(st.roster.iface), "%s", o->iface);
    if (o->master_addr)
        snprintf(st.roster.master_addr, sizeof(st.roster.master_addr), "%s",
                 o->master_addr);
    st.roster.master_port = (int)o->master_port;
    if (o->network_interface)
        snprintf(st.roster.agents.wanted, sizeof(st.roster.agents.wanted), "%s",
                 o->network_interface);
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
out:
    hvdd_server_stop(srv);
    hvdd_state_release(&st);
    if (report_fd >= 0)
        close(report_fd);
    return code;
}

int
main(int argc, char **argv)
{
    opts o = {0};
    int done = 0, code = parse_args(argc, argv, &o, &done);

    if (code == 0 && !done)
        code = run(&o);
    free(o.allow_buf);
    return code;
}
