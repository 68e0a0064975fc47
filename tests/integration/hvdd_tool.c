/* Test client: one call of the hvdd client library per run, so that shell
 * tests can drive hvdd as libcollective and the agent will.
 * usage: hvdd_tool ADDR PORT COMMAND ARGS...   (token from $HVDD_TOKEN)
 * Exit: 0 ok, 4 no such key, 1 any other failure (reason on stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hvdd_client.h"

static int
num(const char *s)
{
    return (int)strtol(s, NULL, 10);
}

static int
report(hvdd_client *c, int r)
{
    if (r == 0)
        return 0;
    fprintf(stderr, "hvdd_tool: %s: %s\n", hvdd_strerror(r),
            hvdd_client_error(c));
    return r == HVDD_ENOTFOUND ? 4 : 1;
}

static int
heartbeats(hvdd_client *c, int rank, int count, int interval_ms)
{
    for (int i = 0; i < count; i++) {
        int r = hvdd_client_heartbeat(c, rank);
        if (r != 0)
            return report(c, r);
        struct timespec ts = {interval_ms / 1000,
                              (interval_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static int
run(hvdd_client *c, int argc, char **argv)
{
    const char *cmd = argv[0];
    hvdd_identity id;
    char *data = NULL;
    size_t len = 0;
    int r;

    if (strcmp(cmd, "put") == 0 && argc == 4)
        return report(
            c, hvdd_client_put(c, argv[1], argv[2], argv[3], strlen(argv[3])));
    if (strcmp(cmd, "get") == 0 && (argc == 3 || argc == 4)) {
        r = hvdd_client_get(c, argv[1], argv[2], argc == 4 ? num(argv[3]) : 0,
                            &data, &len);
        if (r == 0)
            fwrite(data, 1, len, stdout);
        free(data);
        return report(c, r);
    }
    if (strcmp(cmd, "delete") == 0 && argc == 3)
        return report(c, hvdd_client_delete(c, argv[1], argv[2]));
    if (strcmp(cmd, "register") == 0 && (argc == 2 || argc == 3)) {
        r = hvdd_client_register(c, argv[1], (int)getpid(),
                                 argc == 3 ? num(argv[2]) : -1, &id);
        if (r == 0)
            printf("%d %d %d %d %d %d %s\n", id.rank, id.size, id.local_rank,
                   id.local_size, id.cross_rank, id.cross_size, id.iface);
        return report(c, r);
    }
    if (strcmp(cmd, "heartbeat") == 0 && argc == 4)
        return heartbeats(c, num(argv[1]), num(argv[2]), num(argv[3]));
    if (strcmp(cmd, "barrier") == 0 && argc == 3)
        return report(c, hvdd_client_barrier(c, argv[1], num(argv[2])));
    if (strcmp(cmd, "abort") == 0 && argc == 2)
        return report(c, hvdd_client_abort(c, argv[1]));
    if (strcmp(cmd, "status") == 0 && argc == 1) {
        r = hvdd_client_status(c, &data);
        if (r == 0)
            puts(data);
        free(data);
        return report(c, r);
    }
    fprintf(stderr, "hvdd_tool: bad command\n");
    return 2;
}

int
main(int argc, char **argv)
{
    hvdd_client *c;
    int r;

    if (argc < 4) {
        fprintf(stderr, "usage: hvdd_tool ADDR PORT COMMAND ARGS...\n");
        return 2;
    }
    c = hvdd_client_new(argv[1], num(argv[2]), getenv("HVDD_TOKEN"), 5.0);
    if (c == NULL)
        return 1;
    r = run(c, argc - 3, argv + 3);
    hvdd_client_free(c);
    return r;
}
