/* libFuzzer target: the job line an agent reads first on its stdin, which
 * comes over SSH from the launcher on another host. A line that decodes
 * must also encode again into one line (the agent reads up to the first
 * newline) that decodes to the same job: the launcher sends what the
 * encoder writes, so a job the decoder accepts but the encoder mangles
 * would reach the agent changed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent_brief.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant broken: abort, which libFuzzer reports with the input. */
#define REQUIRE(cond)                                                          \
    do {                                                                       \
        if (!(cond))                                                           \
            abort();                                                           \
    } while (0)

static int
same_string(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

/* What the agent uses of a decoded job, compared field by field. */
static void
require_same(const hvdrun_brief *a, const hvdrun_brief *b)
{
    REQUIRE(a->host == b->host && a->np == b->np);
    REQUIRE(a->hosts.count == b->hosts.count);
    for (size_t i = 0; i < a->hosts.count; i++)
        REQUIRE(strcmp(a->hosts.hosts[i].name, b->hosts.hosts[i].name) == 0 &&
                a->hosts.hosts[i].slots == b->hosts.hosts[i].slots);
    REQUIRE(a->plan.size == b->plan.size && a->plan.nhosts == b->plan.nhosts);
    for (size_t i = 0; a->argv[i] || b->argv[i]; i++)
        REQUIRE(same_string(a->argv[i], b->argv[i]));
    /* (none: NULL from a line without them, {NULL} from "chosen": []) */
    for (size_t i = 0;
         (a->chosen && a->chosen[i]) || (b->chosen && b->chosen[i]); i++)
        REQUIRE(a->chosen && b->chosen &&
                same_string(a->chosen[i], b->chosen[i]));
    REQUIRE(a->base.n == b->base.n);
    for (size_t i = 0; i < a->base.n; i++)
        REQUIRE(strcmp(a->base.v[i], b->base.v[i]) == 0);
    REQUIRE(same_string(a->cwd, b->cwd));
    REQUIRE(same_string(a->rendezvous_addr, b->rendezvous_addr));
    REQUIRE(a->rendezvous_port == b->rendezvous_port);
    REQUIRE(same_string(a->token, b->token));
    REQUIRE(same_string(a->network_interface, b->network_interface));
    REQUIRE(same_string(a->output_dir, b->output_dir));
    REQUIRE(a->heartbeat == b->heartbeat && a->kill_grace == b->kill_grace &&
            a->start_timeout == b->start_timeout);
    REQUIRE(a->timestamps == b->timestamps && a->verbose == b->verbose);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1), *again = NULL, err[1024];
    hvdrun_brief j, k;

    if (line == NULL)
        return 0;
    memcpy(line, data, size);
    line[size] = '\0';
    if (hvdrun_brief_decode(line, &j, err, sizeof(err)) == 0) {
        /* the agent names its host and starts its ranks from these */
        REQUIRE(j.host >= 0 && (size_t)j.host < j.hosts.count);
        REQUIRE(cfg_plan_first_rank(&j.plan, j.host) >= 0);
        again = hvdrun_brief_encode(&j);
        REQUIRE(again != NULL);
        REQUIRE(strchr(again, '\n') == again + strlen(again) - 1);
        REQUIRE(hvdrun_brief_decode(again, &k, err, sizeof(err)) == 0);
        require_same(&j, &k);
        hvdrun_brief_release(&k);
    }
    hvdrun_brief_release(&j);
    free(again);
    free(line);
    return 0;
}
