#include "timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "collective.h"
#include "id_index.h"
#include "utf8.h"

struct coll_timeline {
    pthread_mutex_t mu;
    int fd;
    off_t end; /* the file's length: its last byte is the closing ']' */
    struct timespec start;
    char *buf; /* events since the last flush, each after ",\n" */
    size_t len, cap;
    char **tensors; /* a tensor's pid is its index + 1 */
    size_t ntensors, tcap;
    id_index by_name; /* a hash of the name -> index (then compared) */
    int broken;       /* a write failed: no more events */
};

static int
grow(coll_timeline *t, size_t more)
{
    char *p;
    size_t cap;

    if (t->len + more + 1 <= t->cap)
        return 0;
    cap = (t->len + more + 1) * 2;
    if ((p = realloc(t->buf, cap)) == NULL)
        return -1;
    t->buf = p;
    t->cap = cap;
    return 0;
}

static void add(coll_timeline *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
add(coll_timeline *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || grow(t, (size_t)n) != 0) {
        t->broken = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

/* s as the inside of a JSON string (names are the user's, in any bytes:
 * what is not UTF-8 is written as its Latin-1 character). */
static void
add_escaped(coll_timeline *t, const char *s)
{
    while (*s) {
        unsigned char ch = (unsigned char)*s;
        int n = utf8_seq_len((const unsigned char *)s);
        if (ch == '"' || ch == '\\')
            add(t, "\\%c", ch);
        else if (ch < 0x20 || n == 0)
            add(t, "\\u%04x", ch);
        else
            add(t, "%.*s", n, s);
        s += n ? n : 1;
    }
}

static int64_t
name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (int64_t)h;
}

/* The tensor's pid; a new tensor gets its process_name record first. */
static size_t
tensor_pid(coll_timeline *t, const char *name)
{
    char **grown;
    int64_t h = name_hash(name);
    long at = id_index_find(&t->by_name, h);

    if (at >= 0 && strcmp(t->tensors[at], name) == 0)
        return (size_t)at + 1;
    for (size_t i = 0; at >= 0 && i < t->ntensors; i++) /* (a collision) */
        if (strcmp(t->tensors[i], name) == 0)
            return i + 1;
    if (t->ntensors == t->tcap) {
        size_t cap = t->tcap ? t->tcap * 2 : 64;
        if ((grown = realloc(t->tensors, cap * sizeof(*grown))) == NULL)
            return 0;
        t->tensors = grown;
        t->tcap = cap;
    }
    if ((t->tensors[t->ntensors] = strdup(name)) == NULL)
        return 0;
    if (at < 0)
        id_index_put(&t->by_name, h, t->ntensors, t->ntensors);
    t->ntensors++;
    add(t,
        ",\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %zu, "
        "\"args\": {\"name\": \"",
        t->ntensors);
    add_escaped(t, name);
    add(t,
        "\"}},\n{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": "
        "%zu, \"args\": {\"sort_index\": %zu}}",
        t->ntensors, t->ntensors);
    return t->ntensors;
}

static int
write_all(coll_timeline *t, const char *p, size_t n, off_t at)
{
    while (n > 0) {
        ssize_t w = pwrite(t->fd, p, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
        at += w;
    }
    return 0;
}

coll_timeline *
timeline_open(const char *path, char *err, size_t errlen)
{
    coll_timeline *t = calloc(1, sizeof(*t));
    struct timeval now;
    char head[512];
    int n;

    if (t == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (t->fd < 0) {
        snprintf(err, errlen, "HOROVOD_TIMELINE '%.200s': %s", path,
                 strerror(errno));
        free(t);
        return NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &t->start);
    gettimeofday(&now, NULL);
    n = snprintf(head, sizeof(head),
                 "[\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, "
                 "\"args\": {\"start_time_since_epoch_in_micros\": %lld}},\n"
                 "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": "
                 "0, \"args\": {\"sort_index\": 0}}]",
                 (long long)now.tv_sec * 1000000 + now.tv_usec);
    if (write_all(t, head, (size_t)n, 0) != 0) {
        snprintf(err, errlen, "HOROVOD_TIMELINE '%.200s': %s", path,
                 strerror(errno));
        close(t->fd);
        free(t);
        return NULL;
    }
    t->end = n;
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

int64_t
timeline_now(const coll_timeline *t)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - t->start.tv_sec) * 1000000 +
           (now.tv_nsec - t->start.tv_nsec) / 1000;
}

void
timeline_event(coll_timeline *t, const char *tensor, char phase,
               const char *name, const char *args, int64_t ts)
{
    size_t pid;

    if (t == NULL)
        return;
    pthread_mutex_lock(&t->mu);
    if (!t->broken && (pid = tensor_pid(t, tensor)) > 0) {
        add(t, ",\n{\"ph\": \"%c\"", phase);
        if (phase != 'E' && name) {
            add(t, ", \"name\": \"");
            add_escaped(t, name);
            add(t, "\"");
        }
        add(t, ", \"ts\": %lld, \"pid\": %zu%s", (long long)ts, pid,
            phase == 'X' ? ", \"dur\": 0" : "");
        if (args)
            add(t, ", \"args\": {%s}", args);
        add(t, "}");
    }
    pthread_mutex_unlock(&t->mu);
}

void
timeline_marker(coll_timeline *t, const char *name, int64_t ts)
{
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->mu);
    if (!t->broken)
        add(t,
            ",\n{\"ph\": \"i\", \"name\": \"%s\", \"ts\": %lld, \"s\": "
            "\"g\"}",
            name, (long long)ts);
    pthread_mutex_unlock(&t->mu);
}

void
timeline_flush(coll_timeline *t)
{
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->mu);
    if (!t->broken && t->len > 0 && grow(t, 1) == 0) {
        /* over the closing ']', and a new one after: valid throughout
         * but for the moment of the write itself */
        t->buf[t->len++] = ']';
        if (write_all(t, t->buf, t->len, t->end - 1) == 0) {
            t->end += (off_t)t->len - 1;
        } else {
            /* (a disk full part way: back to the last valid file, and no
             * more events) */
            t->broken = 1;
            if (ftruncate(t->fd, t->end) == 0)
                write_all(t, "]", 1, t->end - 1);
        }
        t->len = 0;
    }
    pthread_mutex_unlock(&t->mu);
}

void
timeline_close(coll_timeline *t)
{
    if (t == NULL)
        return;
    timeline_flush(t);
    close(t->fd);
    for (size_t i = 0; i < t->ntensors; i++)
        free(t->tensors[i]);
    free(t->tensors);
    id_index_release(&t->by_name);
    free(t->buf);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

const char *
timeline_dtype(int dt)
{
    switch (dt) {
    case COLL_DT_U8:
        return "uint8";
    case COLL_DT_I8:
        return "int8";
    case COLL_DT_I32:
        return "int32";
    case COLL_DT_I64:
        return "int64";
    case COLL_DT_F16:
        return "float16";
    case COLL_DT_BF16:
        return "bfloat16";
    case COLL_DT_F32:
        return "float32";
    case COLL_DT_F64:
        return "float64";
    }
    return "unknown";
}
