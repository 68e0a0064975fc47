/* Host files: plain ("host slots=N", "host:N") and YAML. */
#ifndef CFG_HOSTFILE_H
#define CFG_HOSTFILE_H

#include <stddef.h>

#include "hostlist.h"

/* 1 when text looks like YAML rather than a plain host file: its first
 * meaningful line starts a YAML sequence ("- "), a document ("---"), or is
 * a "key:" mapping entry. Decided by content, not by file name. */
int cfg_hostfile_is_yaml(const char *text, size_t len);

/* Plain host file: one host per line, "host [slots=N] [max_slots=M]"
 * (Horovod, OpenMPI) or "host:N" (Hydra); '#' comments and blank lines.
 * Errors are "file:line: ...". Appends to out. */
int cfg_hostfile_parse_plain(const char *text, size_t len, const char *file,
                             cfg_hostlist *out, cfg_err *e);

/* YAML host file: a list of hosts (name, slots, max_slots, ssh_port, user,
 * identity_file), optionally under "hosts:", or a "cluster:" list of
 * {master, workers, slots} with name and address ranges. Errors are
 * "file:line:column: ...". Appends to out. */
int cfg_hostfile_parse_yaml(const char *text, size_t len, const char *file,
                            cfg_hostlist *out, cfg_err *e);

/* Detects the format and parses. */
int cfg_hostfile_parse(const char *text, size_t len, const char *file,
                       cfg_hostlist *out, cfg_err *e);

/* Reads path and parses it. */
int cfg_hostfile_load(const char *path, cfg_hostlist *out, cfg_err *e);

#endif
