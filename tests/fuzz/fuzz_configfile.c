/* libFuzzer target: the YAML config file and the option table behind it. */
#include <stdint.h>
#include <stddef.h>

#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
ignore(const char *name, const char *value, void *arg)
{
    (void)name;
    (void)value;
    (void)arg;
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cfg_values job;
    cfg_err e;

    cfg_values_init(&job);
    if (cfg_configfile_parse((const char *)data, size, "fuzz.yaml", &job, &e) ==
        0)
        cfg_values_tunable_env(&job, ignore, NULL);
    cfg_values_release(&job);
    return 0;
}
