/* Is a host of the plan this machine? Then its slots need no SSH. */
#ifndef HVD_LOCAL_HOST_H
#define HVD_LOCAL_HOST_H

#include <stddef.h>

/* 1 for "localhost", loopback addresses, this host's names (full and
 * short) and the addresses of its interfaces; no DNS lookup is made. */
int host_is_local(const char *name);

/* Resolves --network-interface on this host: entries (interface names or
 * CIDRs, comma-separated) in order; the first that names an interface
 * that is up, or an address of one inside the range, wins. Fills iface
 * and addr (its first address, IPv4 preferred). Returns 0, or -1 when
 * nothing here matches. */
int local_interface(const char *wanted, char *iface, size_t ifsize, char *addr,
                    size_t addrsize);

/* A TCP port that was free on every address of this host a moment ago
 * (MASTER_PORT), or 0. */
int free_local_port(void);

#endif
