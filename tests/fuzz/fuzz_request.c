/* libFuzzer target: hvdd's request handling as a pure function. The input
 * is split on NUL bytes into method, path, wait, auth, flags and body; a
 * few requests run against one state so that stored keys, registrations
 * and barriers carry over between them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

#define TOKEN "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next NUL-terminated field of the input, or NULL at its end. */
static const char *
field(const char **p, const char *end, size_t *len)
{
    const char *start = *p, *nul;

    if (start >= end)
        return NULL;
    nul = memchr(start, '\0', (size_t)(end - start));
    *len = (size_t)((nul ? nul : end) - start);
    *p = nul ? nul + 1 : end;
    return start;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1), err[256];
    const char *p = copy, *end = copy + size;
    hvdd_state st;
    int conn_state;

    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    /* a planned job and a standalone one, alternately */
    if (hvdd_state_init(&st, 3, size % 2 ? "a:2,b:1" : NULL, TOKEN, err,
                        sizeof(err)) == 0) {
        for (int i = 0; i < 8; i++) {
            size_t l[6];
            const char *f[6];
            for (int k = 0; k < 6; k++)
                f[k] = field(&p, end, &l[k]);
            if (f[0] == NULL || f[1] == NULL)
                break;
            conn_state =
                f[4] && l[4] > 1 ? (int)(unsigned char)f[4][1] - 1 : -1;
            hvdd_request rq = {f[0],
                               f[1],
                               f[2] && l[2] ? f[2] : NULL,
                               f[3] && l[3] ? f[3] : NULL,
                               f[5],
                               f[5] ? l[5] : 0,
                               f[4] && l[4] && (f[4][0] & 1),
                               f[4] && l[4] && (f[4][0] & 2),
                               &conn_state,
                               100.0 + i};
            hvdd_response rs = {0};
            hvdd_handle(&st, &rq, &rs);
            free(rs.body);
            hvdd_roster_check_heartbeats(&st.roster, 200.0 + i);
        }
    }
    hvdd_state_release(&st);
    free(copy);
    return 0;
}
