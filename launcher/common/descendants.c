#include "descendants.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
pid_set_release(pid_set *s)
{
    free(s->v);
    *s = (pid_set){0};
}

int
pid_set_add(pid_set *s, pid_t pid)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        pid_t *v = realloc(s->v, cap * sizeof(*v));
        if (v == NULL)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = pid;
    return 0;
}

int
pid_set_has(const pid_set *s, pid_t pid)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == pid)
            return 1;
    return 0;
}

static int
kept(pid_t pid, const pid_t *keep, int nkeep)
{
    for (int i = 0; i < nkeep; i++)
        if (keep[i] == pid)
            return 1;
    return 0;
}

/* The pids of a /proc/PID/task/TID/children file, into out. */
static int
read_children(const char *path, pid_set *out)
{
    FILE *f = fopen(path, "re");
    long pid;
    int r = 0;

    if (f == NULL)
        return -1;
    while (r == 0 && fscanf(f, "%ld", &pid) == 1)
        r = pid_set_add(out, (pid_t)pid);
    fclose(f);
    return r;
}

/* This process's children, from every thread's list (a child belongs to
 * the thread that forked it). -1 when the kernel has no such lists. */
static int
own_children(pid_set *out)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    char path[64];
    int r = 0, found = 0;

    if (d == NULL)
        return -1;
    while (r == 0 && (e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%.20s/children",
                 e->d_name);
        if (read_children(path, out) == 0)
            found = 1;
    }
    closedir(d);
    return r == 0 && found ? 0 : -1;
}

int
descendants_any(const pid_t *keep, int nkeep)
{
    pid_set kids = {0};
    int r = own_children(&kids);

    for (size_t i = 0; r == 0 && i < kids.n; i++)
        if (!kept(kids.v[i], keep, nkeep))
            r = 1;
    pid_set_release(&kids);
    return r;
}

/* pid's parent, from /proc/PID/stat (after the command's closing
 * parenthesis, which may itself hold spaces and parentheses); -1 for a
 * process that has ended (a zombie: nothing to stop, only to reap). */
static pid_t
parent_of(const char *pid)
{
    char path[64], buf[512], *close_paren, state;
    ssize_t n;
    int fd;
    long ppid;

    snprintf(path, sizeof(path), "/proc/%.20s/stat", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    if ((close_paren = strrchr(buf, ')')) == NULL ||
        sscanf(close_paren + 1, " %c %ld", &state, &ppid) != 2 ||
        state == 'Z' || state == 'X')
        return -1;
    return (pid_t)ppid;
}

int
descendants_find(const pid_t *keep, int nkeep, pid_set *out)
{
    pid_set all = {0}, parents = {0};
    DIR *d = opendir("/proc");
    struct dirent *e;
    int r = 0;

    *out = (pid_set){0};
    if (d == NULL)
        return -1;
    while (r == 0 && (e = readdir(d)) != NULL) {
        pid_t ppid;
        if (!isdigit((unsigned char)e->d_name[0]) ||
            (ppid = parent_of(e->d_name)) < 0)
            continue;
        r = pid_set_add(&all, (pid_t)strtol(e->d_name, NULL, 10));
        if (r == 0)
            r = pid_set_add(&parents, ppid);
    }
    closedir(d);
    /* breadth first from this process: out grows as it is walked */
    for (size_t k = 0; r == 0 && k <= out->n; k++) {
        pid_t from = k == 0 ? getpid() : out->v[k - 1];
        for (size_t i = 0; r == 0 && i < all.n; i++)
            if (parents.v[i] == from && !kept(all.v[i], keep, nkeep))
                r = pid_set_add(out, all.v[i]);
    }
    pid_set_release(&all);
    pid_set_release(&parents);
    if (r != 0)
        pid_set_release(out);
    return r;
}

/* Reads up to size bytes of /proc/PID/name. While a process is in
 * execve its command line and environment read as empty for a moment:
 * then it tries again, for up to about 10 ms. */
static ssize_t
read_proc(pid_t pid, const char *name, char *buf, size_t size)
{
    char path[64];
    ssize_t n = -1, got;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
    for (int tries = 0; n <= 0 && tries < 5; tries++) {
        if (tries)
            usleep(2000);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            return -1; /* gone, or not ours to read */
        n = 0;
        while ((size_t)n < size &&
               (got = read(fd, buf + n, size - (size_t)n)) > 0)
            n += got;
        close(fd);
    }
    return n;
}

void
proc_command(pid_t pid, char *buf, size_t size)
{
    ssize_t n = read_proc(pid, "cmdline", buf, size - 1);

    if (n <= 0) {
        snprintf(buf, size, "?");
        return;
    }
    buf[n] = '\0';
    while (n > 0 && buf[n - 1] == '\0')
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
}

int
proc_holds(pid_t pid, ino_t ino)
{
    char path[64], fd_path[128];
    struct dirent *e;
    struct stat st;
    DIR *d;
    int held = 0;

    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    if ((d = opendir(path)) == NULL)
        return 0;
    while (!held && (e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(fd_path, sizeof(fd_path), "%s/%.20s", path, e->d_name);
        held = stat(fd_path, &st) == 0 && st.st_ino == ino;
    }
    closedir(d);
    return held;
}

int
proc_rank(pid_t pid)
{
    char buf[65536];
    static const char name[] = "HOROVOD_RANK=";
    ssize_t n = read_proc(pid, "environ", buf, sizeof(buf) - 1);
    int rank = -1;

    if (n <= 0)
        return -1;
    buf[n] = '\0';
    for (char *p = buf; p < buf + n; p += strlen(p) + 1)
        if (strncmp(p, name, sizeof(name) - 1) == 0)
            rank = (int)strtol(p + sizeof(name) - 1, NULL, 10);
    return rank;
}
