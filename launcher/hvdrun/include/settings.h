/* From argv to a plan: the command line over the config file over the
 * defaults, then the hosts, then the ranks. */
#ifndef HVD_SETTINGS_H
#define HVD_SETTINGS_H

#include "hostlist.h"
#include "options.h"
#include "plan.h"

typedef struct settings {
    cfg_values values;
    cfg_hostlist hosts;
    cfg_plan plan;
    char **command; /* argv of the worker command; may be empty */
    int ncommand;
} settings;

/* Fills s. Prints a one-line error (and a hint after usage errors) and
 * returns hvdrun's exit code on failure; 0 on success. --help and
 * --version are handled by the caller before the plan is built: *done is
 * set when they were printed. */
int settings_load(int argc, char **argv, settings *s, int *done);
void settings_release(settings *s);
/* An elastic job: --min-np or --max-np was given. */
int settings_elastic(const settings *s);

#endif
