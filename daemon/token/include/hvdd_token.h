/* The job token: 256 random bits as 64 hex digits. hvdrun makes it,
 * hvdd checks it, the client (daemon/client) and libcollective send it;
 * its own small library so that hvdrun needs neither libcurl nor hvdd's
 * code to make one. */
#ifndef HVDD_TOKEN_H
#define HVDD_TOKEN_H

#define HVDD_TOKEN_LEN 64
/* The variable that carries the token to workers; never forwarded on. */
#define HVDD_TOKEN_ENV "HVDD_TOKEN"

/* Fills out (HVDD_TOKEN_LEN + 1 bytes) from getrandom(). Returns 0 or -1. */
int hvdd_token_new(char *out);
/* 1 when s is HVDD_TOKEN_LEN hex digits. */
int hvdd_token_valid(const char *s);

#endif
