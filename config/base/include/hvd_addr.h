/* IP address arithmetic, IPv4 and IPv6 alike: part of hvdbase, the small
 * library every component of the tree may link (hvdd's NIC choice and
 * the launcher's --network-interface both match addresses to ranges). */
#ifndef HVD_ADDR_H
#define HVD_ADDR_H

#include <stddef.h>

/* addr (numeric) as 16 bytes, IPv4 mapped into ::ffff:0:0/96; *v4 says
 * which it was. Returns 0, or -1 when addr is not an address. */
int hvd_addr_bytes(const char *addr, unsigned char out[16], int *v4);

/* 1 when addr lies inside cidr ("10.1.0.0/16", "2001:db8::/32"). */
int hvd_addr_in_cidr(const char *addr, const char *cidr);

/* The network of addr/prefix as "A.B.C.D/P" (or IPv6). Returns 0 or -1. */
int hvd_addr_network(const char *addr, int prefix, char *out, size_t size);

#endif
