/* libFuzzer target: each node's GPUs and other gres from scontrol show job -d's
 * reply, which hvdrun reads from another program before it starts a Slurm job's
 * agents. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "slurm_alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *reply = malloc(size + 1), *nodes[] = {"n1", "n2", "h10"};
    cfg_node_gres gres[3];
    cfg_err e;

    if (reply == NULL)
        return 0;
    memcpy(reply, data, size);
    reply[size] = '\0';
    (void)cfg_slurm_node_gres(reply, "7", nodes, 3, gres, &e);
    free(reply);
    return 0;
}
