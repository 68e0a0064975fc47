/* hvdd's command line. Each option is in one table (options.c), from which
 * the getopt_long table, --help and the parser are made. */
#ifndef HVDD_OPTIONS_H
#define HVDD_OPTIONS_H

/* What the command line asks for. The strings point into argv, except
 * allow, whose entries point into allow_buf. */
typedef struct hvdd_opts {
    char addr[64]; /* --listen's address; default 0.0.0.0 */
    int port;
    int listen_fd;  /* -1: none */
    int channel_fd; /* the launcher's channel; -1: none */
    long size;
    const char *hosts;
    const char *token_file;
    int token_stdin;
    char *allow_buf;
    const char *allow[257]; /* NULL-ended */
    double heartbeat_timeout;
    const char *iface, *master_addr, *network_interface;
    long master_port;
    int debug, foreground;
} hvdd_opts;

/* Fills *o (cleared first) from argv. Returns 0 to run the daemon, with
 * *done set when --help or --version has been answered instead, or, after
 * saying why on stderr, the exit code HVD_EXIT_USAGE. Whatever it returns,
 * the caller releases o with hvdd_opts_release. */
int hvdd_opts_parse(int argc, char **argv, hvdd_opts *o, int *done);

/* Frees what hvdd_opts_parse allocated (allow_buf). */
void hvdd_opts_release(hvdd_opts *o);

#endif
