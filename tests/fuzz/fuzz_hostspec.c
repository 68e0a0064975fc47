/* libFuzzer target: the -H host spec parser and the plan built from it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = malloc(size + 1);
    cfg_hostlist l;
    cfg_plan p;
    cfg_err e;

    if (spec == NULL)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    cfg_hostlist_init(&l);
    if (cfg_hostspec_parse(spec, &l, &e) == 0 &&
        cfg_hostlist_slots(&l) < 100000 &&
        cfg_plan_build(&l, (int)(size % 64), &p, &e) == 0)
        cfg_plan_release(&p);
    cfg_hostlist_release(&l);
    free(spec);
    return 0;
}
