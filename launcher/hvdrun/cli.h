/* The command line, parsed with the option table of config/options.h. */
#ifndef HVD_CLI_H
#define HVD_CLI_H

#include <stdio.h>

#include "options.h"

/* Parses argv into job. Options come first; the first word that is not an
 * option (or everything after "--") starts the command, whose index is
 * stored in *cmd. Long options are "--name VALUE" or "--name=VALUE"; short
 * ones ("-np", "-H", "-x") and single-dash long ones ("-hostfile", as
 * mpirun users type them) take the next word. On error returns -1 with a
 * one-line message in err. */
int cli_parse(int argc, char **argv, cfg_values *vals, int *cmd, char *err,
              size_t errlen);

/* Prints the usage text, generated from the option table. */
void cli_help(FILE *f);

#endif
