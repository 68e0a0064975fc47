/* hvdrun's own exit codes. A worker's failure is reported with the
 * worker's own code (128+N for signal N), as mpirun and horovodrun do; the
 * codes below are from sysexits.h so that they rarely clash with those. */
#ifndef HVD_EXIT_CODES_H
#define HVD_EXIT_CODES_H

enum {
    HVD_EXIT_OK = 0,
    HVD_EXIT_USAGE = 64,      /* bad option, -H spec, -np, no command */
    HVD_EXIT_CONFIG = 65,     /* bad or unreadable host file or config file */
    HVD_EXIT_LAUNCH = 69,     /* a worker could not be started in time, a host
                                 cannot be reached, or hvdrun itself failed */
    HVD_EXIT_RENDEZVOUS = 70, /* the rendezvous daemon failed */
    HVD_EXIT_NOEXEC = 126,    /* the command exists but cannot be run */
    HVD_EXIT_NOTFOUND = 127   /* the command was not found */
};

#endif
