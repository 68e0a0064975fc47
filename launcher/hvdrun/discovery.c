#include "discovery.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hvd_clock.h"
#include "spawn.h"

extern char **environ;

/* 1 when a "host[:slots]" line names slots: a ':' after the host (an
 * IPv6 literal is in brackets). */
static int
has_slots(const char *line)
{
    const char *close = line[0] == '[' ? strchr(line, ']') : NULL;

    return strchr(close ? close : line, ':') != NULL;
}

int
discovery_parse(const char *text, int default_slots, cfg_hostlist *out,
                char *err, size_t errlen)
{
    char line[1024];
    int no = 0;
    cfg_err e;

    while (*text) {
        size_t n = strcspn(text, "\n");
        char *s = line, *end;
        no++;
        if (n >= sizeof(line)) {
            snprintf(err, errlen, "line %d is too long", no);
            return -1;
        }
        memcpy(line, text, n);
        line[n] = '\0';
        text += n + (text[n] == '\n');
        while (*s == ' ' || *s == '\t')
            s++;
        end = s + strlen(s);
        while (end > s &&
               (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
            *--end = '\0';
        if (*s == '\0')
            continue;
        if (!has_slots(s)) /* "host": --slots-per-host */
            snprintf(end, sizeof(line) - (size_t)(end - line), ":%d",
                     default_slots);
        if (strchr(s, ',') != NULL || cfg_hostspec_parse(s, out, &e) != 0) {
            *end = '\0'; /* the line as it was printed */
            snprintf(err, errlen, "line %d '%.200s': expected host[:slots]", no,
                     s);
            return -1;
        }
    }
    return 0;
}

void
discovery_init(discovery *d, const char *command, int default_slots,
               double period, double timeout)
{
    memset(d, 0, sizeof(*d));
    d->command = command;
    d->default_slots = default_slots;
    d->period = period;
    d->timeout = timeout;
    d->out_fd = d->err_fd = -1;
}

int
discovery_fd(const discovery *d, int which)
{
    return which == 0 ? d->out_fd : d->err_fd;
}

static int
start(discovery *d, double now)
{
    char *argv[] = {"/bin/sh", "-c", (char *)d->command, NULL};
    sigset_t none;
    spawned sp;
    int e;

    sigemptyset(&none);
    d->out_len = d->err_len = 0;
    d->started = now;
    d->next = now + d->period;
    if (spawn_worker(argv, environ, &none, &sp) != 0)
        return -1;
    if (spawn_exec_errno(sp.status_fd, &e) == 1) { /* (sh itself) */
        close(sp.status_fd);
        close(sp.out_fd);
        close(sp.err_fd);
        waitpid(sp.pid, NULL, 0);
        errno = e;
        return -1;
    }
    close(sp.status_fd);
    d->pid = sp.pid;
    d->out_fd = sp.out_fd;
    d->err_fd = sp.err_fd;
    return 0;
}

/* Reads what is there; a pipe at EOF is closed. */
static void
drain(int *fd, char *buf, size_t cap, size_t *len)
{
    char scratch[4096];
    ssize_t n;

    while (*fd >= 0) {
        size_t room = cap - 1 - *len;
        n = read(*fd, room ? buf + *len : scratch,
                 room ? room : sizeof(scratch));
        if (n > 0 && room)
            *len += (size_t)n;
        else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
            close(*fd);
            *fd = -1;
        } else if (n < 0) {
            break;
        }
    }
    buf[*len] = '\0';
}

/* The run's last stderr line, for a message. */
static const char *
last_err_line(discovery *d)
{
    char *s = d->err;
    size_t n = d->err_len;

    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    for (size_t i = n; i > 0; i--)
        if (s[i - 1] == '\n')
            return s + i;
    return s;
}

/* The run is over (status from waitpid): its hosts, or why not. */
static int
finish(discovery *d, int status, cfg_hostlist *out, char *err, size_t errlen)
{
    const char *said = last_err_line(d);
    char why[600];

    d->pid = 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        if (d->out_len >= sizeof(d->out) - 1) {
            snprintf(err, errlen, "it printed more than %d bytes",
                     DISCOVERY_OUTPUT_MAX - 1);
            return -1;
        }
        return discovery_parse(d->out, d->default_slots, out, err, errlen) == 0
                   ? 1
                   : -1;
    }
    if (WIFEXITED(status))
        snprintf(why, sizeof(why), "exit %d", WEXITSTATUS(status));
    else
        snprintf(why, sizeof(why), "killed by signal %d", WTERMSIG(status));
    snprintf(err, errlen, "%s%s%.400s", why, said[0] ? ": " : "", said);
    return -1;
}

int
discovery_turn(discovery *d, double now, cfg_hostlist *out, char *err,
               size_t errlen)
{
    int status;
    pid_t r;

    if (d->pid == 0) {
        if (now < d->next)
            return 0;
        if (start(d, now) != 0) {
            snprintf(err, errlen, "cannot run it: %s", strerror(errno));
            return -1;
        }
    }
    drain(&d->out_fd, d->out, sizeof(d->out), &d->out_len);
    drain(&d->err_fd, d->err, sizeof(d->err), &d->err_len);
    if (now - d->started > d->timeout) {
        kill(-d->pid, SIGKILL);
        waitpid(d->pid, NULL, 0);
        discovery_release(d);
        snprintf(err, errlen, "it ran longer than %g s", d->timeout);
        return -1;
    }
    if (d->out_fd >= 0 || d->err_fd >= 0 ||
        (r = waitpid(d->pid, &status, WNOHANG)) == 0)
        return 0;
    if (r < 0) {
        d->pid = 0;
        snprintf(err, errlen, "lost it: %s", strerror(errno));
        return -1;
    }
    cfg_hostlist_release(out);
    cfg_hostlist_init(out);
    return finish(d, status, out, err, errlen);
}

void
discovery_release(discovery *d)
{
    if (d->pid > 0) {
        kill(-d->pid, SIGKILL);
        waitpid(d->pid, NULL, 0);
        d->pid = 0;
    }
    if (d->out_fd >= 0)
        close(d->out_fd);
    if (d->err_fd >= 0)
        close(d->err_fd);
    d->out_fd = d->err_fd = -1;
}

int
discovery_run(const char *command, int default_slots, double timeout,
              cfg_hostlist *out, char *err, size_t errlen)
{
    discovery d;
    int r;

    discovery_init(&d, command, default_slots, 0, timeout);
    while ((r = discovery_turn(&d, hvd_mono_now(), out, err, errlen)) == 0) {
        struct pollfd p[2] = {{d.out_fd, POLLIN, 0}, {d.err_fd, POLLIN, 0}};
        poll(p, 2, 50); /* (a descriptor of -1 is skipped) */
    }
    discovery_release(&d);
    return r == 1 ? 0 : -1;
}
