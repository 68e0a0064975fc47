/* The exit codes of hvdrun and hvdd, one list for both programs. They come
 * from sysexits.h, so that they rarely clash with a worker's own code, which
 * hvdrun passes on (128+N for signal N) as mpirun and horovodrun do. A code
 * means the same kind of failure in either program; the comments say what
 * each program uses it for. man/hvdrun.1 and man/hvdd.8 (EXIT STATUS) and
 * both programs' --help list them. */
#ifndef HVD_EXIT_H
#define HVD_EXIT_H

enum {
    HVD_EXIT_OK = 0,
    /* EX_USAGE. hvdrun: a bad option or value, -H spec or -np, no command.
     * hvdd: a bad option or value, no --size or token source, a bad
     * --hosts plan. */
    HVD_EXIT_USAGE = 64,
    /* EX_DATAERR: a file the program was given is unreadable or invalid.
     * hvdrun: the host file or config file. hvdd: the token file, or no
     * valid token on standard input. */
    HVD_EXIT_CONFIG = 65,
    /* EX_UNAVAILABLE: the job could not be set up. hvdrun: a worker did
     * not start in time, a host cannot be reached, or hvdrun itself
     * failed. hvdd: it cannot listen, detach or set up its signals. */
    HVD_EXIT_LAUNCH = 69,
    /* EX_SOFTWARE. hvdrun only: the rendezvous daemon failed, or stopped
     * the job (an abort, a missed heartbeat). */
    HVD_EXIT_RENDEZVOUS = 70,
    /* hvdrun only, as the shell does: the command exists but cannot be
     * run, or was not found. */
    HVD_EXIT_NOEXEC = 126,
    HVD_EXIT_NOTFOUND = 127
};

#endif
