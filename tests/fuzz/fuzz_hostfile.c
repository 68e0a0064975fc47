/* libFuzzer target: host file detection, the plain and the YAML parsers,
 * and the name and address ranges they expand. */
#include <stdint.h>
#include <stddef.h>

#include "hostfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cfg_hostlist l;
    cfg_err e;

    cfg_hostlist_init(&l);
    cfg_hostfile_parse((const char *)data, size, "fuzz", &l, &e);
    cfg_hostlist_release(&l);
    cfg_hostlist_init(&l);
    cfg_hostfile_parse_plain((const char *)data, size, "fuzz", &l, &e);
    cfg_hostlist_release(&l);
    return 0;
}
