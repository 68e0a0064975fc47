/* hvdd's options, each once in `table` below: getopt_long's table, --help
 * and the parser are made from it, and tests/integration/manpage.sh
 * compares --help with man/hvdd.8. */
#include "options.h"

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hvd_exit.h"
#include "hvd_numbers.h"

/* How an option's argument is parsed and where it goes. */
typedef enum kind {
    K_FLAG,    /* no argument: the int at `off` becomes 1 */
    K_STR,     /* the argument itself: a const char * at `off` */
    K_INT,     /* an integer in [min, max]: an int at `off` */
    K_LONG,    /* an integer in [min, max]: a long at `off` */
    K_DOUBLE,  /* a number in [min, max]: a double at `off` */
    K_LISTEN,  /* "ADDR:PORT", "[v6]:PORT" or ":PORT": addr and port */
    K_LIST,    /* "a,b,...": allow, through allow_buf */
    K_VERSION, /* answered at once, like K_HELP */
    K_HELP
} kind;

typedef struct option_def {
    const char *name; /* without "--"; NULL: only the short form */
    char short_name;  /* 0: none */
    kind kind;
    size_t off;
    long min, max;
    const char *arg;   /* the metavar; NULL: no argument */
    const char *wants; /* a bad value gets "--name wants WANTS, not 'x'" */
    const char *help;
} option_def;

#define AT(field) offsetof(hvdd_opts, field)

/* In --help's order. */
static const option_def table[] = {
    {.name = "size",
     .kind = K_LONG,
     .off = AT(size),
     .min = 1,
     .max = 1 << 20,
     .arg = "N",
     .wants = "a number >= 1",
     .help = "the number of ranks in the job (required)"},
    {.name = "listen",
     .short_name = 'l',
     .kind = K_LISTEN,
     .arg = "ADDR:PORT",
     .wants = "ADDR:PORT",
     .help = "listen there, port 0: any (default 0.0.0.0:0)"},
    {.name = "listen-fd",
     .kind = K_INT,
     .off = AT(listen_fd),
     .min = 0,
     .max = 65535,
     .arg = "FD",
     .wants = "a descriptor",
     .help = "serve this bound, listening socket (as hvdrun does)"},
    {.name = "channel-fd",
     .kind = K_INT,
     .off = AT(channel_fd),
     .min = 0,
     .max = 65535,
     .arg = "FD",
     .wants = "a descriptor",
     .help = "serve the launcher's channel on this socket (as hvdrun does)"},
    {.name = "hosts",
     .kind = K_STR,
     .off = AT(hosts),
     .arg = "HOST:N,...",
     .help = "the job's plan, as for hvdrun -H"},
    {.name = "token-file",
     .kind = K_STR,
     .off = AT(token_file),
     .arg = "FILE",
     .help = "read the job token; create FILE with one when missing"},
    {.name = "token-stdin",
     .kind = K_FLAG,
     .off = AT(token_stdin),
     .help = "read the token on stdin; exit when stdin ends"},
    {.name = "allow",
     .kind = K_LIST,
     .arg = "ADDR,...",
     .help = "more addresses that may use the key-value store"},
    {.name = "heartbeat-timeout",
     .kind = K_DOUBLE,
     .off = AT(heartbeat_timeout),
     .min = 0,
     .max = 1000000,
     .arg = "S",
     .wants = "seconds",
     .help = "abort when a rank is silent this long (0: never)"},
    {.name = "iface",
     .kind = K_STR,
     .off = AT(iface),
     .arg = "NAME",
     .help = "the interface workers are given (default lo)"},
    {.name = "network-interface",
     .kind = K_STR,
     .off = AT(network_interface),
     .arg = "NAME[,NAME]|CIDR",
     .help = "preferred networks across hosts, by name or range"},
    {.name = "master-addr",
     .kind = K_STR,
     .off = AT(master_addr),
     .arg = "ADDR",
     .help = "the MASTER_ADDR workers are given (default 127.0.0.1)"},
    {.name = "master-port",
     .kind = K_LONG,
     .off = AT(master_port),
     .min = 0,
     .max = 65535,
     .arg = "PORT",
     .wants = "a port",
     .help = "the MASTER_PORT workers are given"},
    {.short_name = 'd',
     .kind = K_FLAG,
     .off = AT(debug),
     .help = "debug log: every request, its status, every held one"},
    {.name = "foreground",
     .kind = K_FLAG,
     .off = AT(foreground),
     .help = "do not detach (standalone use); log to stderr"},
    {.name = "version",
     .kind = K_VERSION,
     .help = "print the version and exit"},
    {.name = "help",
     .short_name = 'h',
     .kind = K_HELP,
     .help = "print this help and exit"},
};

enum { NOPTS = sizeof(table) / sizeof(table[0]), LONG_ONLY = 256 };

static void
usage(FILE *f)
{
    fprintf(f, "usage: hvdd --size N (--token-file FILE | --token-stdin) "
               "[option...]\n"
               "The rendezvous daemon of hvdrun jobs; see hvdd(8).\n\n"
               "Options:\n");
    for (size_t i = 0; i < NOPTS; i++) {
        const option_def *d = &table[i];
        char left[64];
        int n = 0;

        if (d->short_name)
            n += snprintf(left + n, sizeof(left) - n, "-%c%s", d->short_name,
                          d->name ? ", " : "");
        if (d->name)
            n += snprintf(left + n, sizeof(left) - n, "--%s", d->name);
        if (d->arg)
            snprintf(left + n, sizeof(left) - n, " %s", d->arg);
        /* A long one gets a line of its own, to stay within 80 columns. */
        if (strlen(left) > 23)
            fprintf(f, "  %s\n  %-23s %s\n", left, "", d->help);
        else
            fprintf(f, "  %-23s %s\n", left, d->help);
    }
    fprintf(f,
            "\nExit status: %d stopped by a signal or the end of stdin, "
            "%d usage error,\n%d bad token file or token, %d cannot listen "
            "or start.\n",
            HVD_EXIT_OK, HVD_EXIT_USAGE, HVD_EXIT_CONFIG, HVD_EXIT_LAUNCH);
}

static int
usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "hvdd: %s '%s'\ntry 'hvdd --help'\n", msg, arg);
    return HVD_EXIT_USAGE;
}

static int
bad_value(const option_def *d, const char *arg)
{
    char msg[128];

    snprintf(msg, sizeof(msg), "--%s wants %s, not", d->name, d->wants);
    return usage_error(msg, arg);
}

/* "ADDR:PORT", "[v6]:PORT" or ":PORT". */
static int
parse_listen(const char *s, hvdd_opts *o)
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

/* The last --allow wins, as with every other option. */
static int
split_allow(hvdd_opts *o, const char *list)
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

/* Stores one option's argument. Returns 0 or an exit code. */
static int
set(const option_def *d, const char *arg, hvdd_opts *o)
{
    char *at = (char *)o + d->off;
    long n;

    switch (d->kind) {
    case K_FLAG:
        *(int *)at = 1;
        return 0;
    case K_STR:
        *(const char **)at = arg;
        return 0;
    case K_INT:
        if (hvd_parse_long(arg, d->min, d->max, &n) != 0)
            return bad_value(d, arg);
        *(int *)at = (int)n;
        return 0;
    case K_LONG:
        if (hvd_parse_long(arg, d->min, d->max, (long *)at) != 0)
            return bad_value(d, arg);
        return 0;
    case K_DOUBLE:
        if (hvd_parse_double(arg, d->min, d->max, (double *)at) != 0)
            return bad_value(d, arg);
        return 0;
    case K_LISTEN:
        return parse_listen(arg, o) != 0 ? bad_value(d, arg) : 0;
    case K_LIST:
        return split_allow(o, arg) != 0 ? HVD_EXIT_USAGE : 0;
    case K_VERSION:
    case K_HELP:
        break;
    }
    return 0;
}

/* getopt_long's view of the table: a long option returns its short form,
 * or LONG_ONLY + its index when it has none. */
static void
getopt_tables(struct option *longs, char *shorts)
{
    size_t nl = 0, ns = 0;

    for (size_t i = 0; i < NOPTS; i++) {
        const option_def *d = &table[i];
        int val = d->short_name ? d->short_name : LONG_ONLY + (int)i;

        if (d->name)
            longs[nl++] = (struct option){
                d->name, d->arg ? required_argument : no_argument, NULL, val};
        if (d->short_name) {
            shorts[ns++] = d->short_name;
            if (d->arg)
                shorts[ns++] = ':';
        }
    }
    longs[nl] = (struct option){NULL, 0, NULL, 0};
    shorts[ns] = '\0';
}

static const option_def *
option_for(int c)
{
    if (c >= LONG_ONLY && c < LONG_ONLY + NOPTS)
        return &table[c - LONG_ONLY];
    for (size_t i = 0; c > 0 && i < NOPTS; i++)
        if (table[i].short_name == c)
            return &table[i];
    return NULL; /* '?': getopt_long has said what is wrong */
}

/* What --size and the token source need, once every option is read. */
static int
check_required(const hvdd_opts *o)
{
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

int
hvdd_opts_parse(int argc, char **argv, hvdd_opts *o, int *done)
{
    struct option longs[NOPTS + 1];
    char shorts[2 * NOPTS + 1];
    const option_def *d;
    int c, r;

    memset(o, 0, sizeof(*o));
    snprintf(o->addr, sizeof(o->addr), "0.0.0.0");
    o->listen_fd = -1;
    o->channel_fd = -1;
    *done = 0;
    getopt_tables(longs, shorts);
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if ((d = option_for(c)) == NULL) {
            fprintf(stderr, "try 'hvdd --help'\n");
            return HVD_EXIT_USAGE;
        }
        if (d->kind == K_VERSION || d->kind == K_HELP) {
            if (d->kind == K_VERSION)
                printf("hvdd %s\n", HVD_VERSION);
            else
                usage(stdout);
            *done = 1;
            return 0;
        }
        if ((r = set(d, optarg, o)) != 0)
            return r;
    }
    if (optind < argc)
        return usage_error("unexpected argument", argv[optind]);
    return check_required(o);
}

void
hvdd_opts_release(hvdd_opts *o)
{
    free(o->allow_buf);
    o->allow_buf = NULL;
}
