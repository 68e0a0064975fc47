/* Host keys against ~/.ssh/known_hosts, as OpenSSH checks them: plain and
 * hashed entries, "[host]:port" for other ports. libssh2 reads the file;
 * new entries are appended by hand, because libssh2's writer rewrites the
 * whole file (dropping comments and markers). */
#ifndef HVD_KNOWN_HOSTS_H
#define HVD_KNOWN_HOSTS_H

#include <libssh2.h>
#include <stddef.h>

enum { KH_MATCH, KH_ADDED, KH_UNKNOWN, KH_CHANGED, KH_ERROR };

/* Checks the session's host key for host:port in file. An unknown key is
 * appended (KH_ADDED) when accept_new is set, else KH_UNKNOWN. The key's
 * SHA256 fingerprint goes to fp. */
int known_hosts_check(LIBSSH2_SESSION *s, const char *file, const char *host,
                      int port, int accept_new, char *fp, size_t fpsize);

/* ~/.ssh/known_hosts, or "" when there is no home directory. */
void known_hosts_default(char *path, size_t size);

/* 1 when the user's ~/.ssh/config says to accept new host keys
 * (StrictHostKeyChecking accept-new or no, outside any Host block or in
 * "Host *"). */
int known_hosts_config_accepts_new(void);

#endif
