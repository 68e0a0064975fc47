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

/* The check itself, with the entries already in kh (read by libssh2 from
 * a file or line by line): KH_MATCH, KH_CHANGED, KH_UNKNOWN, or KH_ERROR
 * (also for a key type libssh2 cannot name). type is the session's
 * LIBSSH2_HOSTKEY_TYPE_*, key the raw key blob. */
int known_hosts_lookup(LIBSSH2_KNOWNHOSTS *kh, const char *host, int port,
                       int type, const char *key, size_t len);

/* libssh2_knownhost_readfile reads lines into a 4092-byte buffer: a longer
 * one is cut in two, its key truncated (the host then looks changed) and
 * the rest read as a broken line that ends the reading of the file. */
#define KH_LINE_MAX 4091 /* with its newline */
/* libssh2 1.10 never matches a host field ("HOST" or "[HOST]:PORT") of 255
 * characters or more: such an entry would be written and never found. */
#define KH_HOST_FIELD_MAX 254

/* The line known_hosts_check appends for a new key to a file whose last
 * byte is last (0 for an empty file): "HOST TYPE BASE64\n" ("[HOST]:PORT
 * ..." off port 22), after a newline when last is not one. Written into
 * line; its length, or -1 when the key type is unknown, the line does not
 * fit in size or is longer than KH_LINE_MAX, or the host field is longer
 * than KH_HOST_FIELD_MAX. */
int known_hosts_entry(char *line, size_t size, int last, const char *host,
                      int port, int type, const char *key, size_t len);

/* ~/.ssh/known_hosts, or "" when there is no home directory. */
void known_hosts_default(char *path, size_t size);

/* 1 when the user's ~/.ssh/config says to accept new host keys
 * (StrictHostKeyChecking accept-new or no, outside any Host block or in
 * "Host *"). */
int known_hosts_config_accepts_new(void);
/* The same decision on the text of a config file (len bytes, no NUL
 * needed), read line by line as the file is. */
int known_hosts_config_text_accepts_new(const char *text, size_t len);

#endif
