/* Base64 as OpenSSH writes it: key blobs (padded) in known_hosts and .pub
 * files, SHA256 fingerprints (unpadded). */
#ifndef HVD_BASE64_H
#define HVD_BASE64_H

#include <stddef.h>

/* Encodes n bytes into out (NUL-terminated, cut to fit size). */
void base64_encode(const unsigned char *in, size_t n, char *out, size_t size,
                   int pad);

#endif
