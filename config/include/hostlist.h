/* The list of hosts a job may use, as given by -H, a host file or both. */
#ifndef CFG_HOSTLIST_H
#define CFG_HOSTLIST_H

#include <stddef.h>

#include "cfg_error.h"

/* Upper bound on the slots of one list (and so of one host) and on its
 * hosts: far above any real cluster, low enough that a typo cannot
 * exhaust memory, nor a file of ranges that name the same hosts again
 * and again add them for hours. */
#define CFG_MAX_SLOTS 1048576
#define CFG_MAX_HOSTS 65536

typedef struct cfg_host {
    char *name;          /* host name or address; IPv6 without brackets */
    int slots;           /* >= 1 */
    int max_slots;       /* 0 when not given */
    int ssh_port;        /* 0 when not given */
    char *user;          /* NULL when not given */
    char *identity_file; /* NULL when not given */
} cfg_host;

typedef struct cfg_hostlist {
    cfg_host *hosts;
    size_t count;
    size_t cap;
    size_t *slot_of; /* hash of names -> index + 1, for repeated hosts */
    size_t nslots;   /* a power of two, at least twice count */
    long slots;      /* of all hosts: at most CFG_MAX_SLOTS */
} cfg_hostlist;

void cfg_hostlist_init(cfg_hostlist *l);
/* Frees every host's strings and the array; l may be reused after init. */
void cfg_hostlist_release(cfg_hostlist *l);

/* Appends a copy of h (its strings are duplicated). A host already in the
 * list gets h's slots added to its own, as OpenMPI does for repeated host
 * file lines, and its max_slots too while both give one (else none); a
 * user, SSH port or identity file only h gives is taken. Returns 0,
 * CFG_ENOMEM, CFG_ERANGE when the list or the host's slots would pass
 * their bounds, or CFG_EINVAL when h gives another user, port or identity
 * file than the host has; nothing changes on failure. */
int cfg_hostlist_add(cfg_hostlist *l, const cfg_host *h, cfg_err *e);
/* The same, with where ("file:line", "host entry 3") before a bound's
 * message. */
int cfg_hostlist_add_at(cfg_hostlist *l, const cfg_host *h, const char *where,
                        cfg_err *e);

/* Total slots of all hosts. */
long cfg_hostlist_slots(const cfg_hostlist *l);

/* 1 when name is a valid host name (letters, digits, '-', '_', '.') or an
 * IPv6 literal without brackets. */
int cfg_host_name_valid(const char *name);

/* Parses a -H value: "host[:slots][,host[:slots]...]", IPv6 in brackets
 * ("[fe80::1]:2"), "user@host" allowed, spaces around commas tolerated,
 * no slots meaning 1. Appends to out. On error out is left as it was
 * before the bad entry; e names the entry and its position (1-based). */
int cfg_hostspec_parse(const char *spec, cfg_hostlist *out, cfg_err *e);

#endif
