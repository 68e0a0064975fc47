/* Is a host of the plan this machine? Then its slots need no SSH. */
#ifndef HVD_LOCAL_HOST_H
#define HVD_LOCAL_HOST_H

/* 1 for "localhost", loopback addresses, this host's names (full and
 * short) and the addresses of its interfaces; no DNS lookup is made. */
int host_is_local(const char *name);

/* A TCP port that was free on 127.0.0.1 a moment ago, or 0. */
int free_local_port(void);

#endif
