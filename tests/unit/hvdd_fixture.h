/* A real hvdd for the suites that talk to it over the launcher's channel
 * (test_relay.c, test_chan.c): a job of 3 ranks (on host h, unless said
 * otherwise), started as hvdrun starts it (the token on stdin, the
 * channel as descriptor 4). */
#ifndef HVD_HVDD_FIXTURE_H
#define HVD_HVDD_FIXTURE_H

#include <sys/types.h>

#define HVDD_FIXTURE_TOKEN                                                     \
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

typedef struct hvdd_fixture {
    pid_t pid;
    int lifeline; /* hvdd's stdin: it ends when this closes */
    int chan;     /* the launcher's end of the channel */
    int port;     /* its HTTP port on 127.0.0.1 */
} hvdd_fixture;

/* Starts it (fails the test when it cannot). */
void hvdd_fixture_start(hvdd_fixture *f);
/* The same for a plan of hosts ("a:2,b:1", 3 ranks in all). */
void hvdd_fixture_start_hosts(hvdd_fixture *f, const char *hosts);

/* Ends it and waits for it (the channel's end, if still open, is the
 * caller's). */
void hvdd_fixture_stop(hvdd_fixture *f);

#endif
