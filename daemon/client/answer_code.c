/* hvdd's answers as hvdd_client.h's codes (hvdd_chan.h), for both
 * clients; a file of its own, so that the HTTP client's users link
 * nothing of the channel. */
#include <stdio.h>
#include <string.h>

#include "hvdd_chan.h"

int
hvdd_answer_code(int status, const char *body, size_t len, const char *what,
                 char *err, size_t errlen)
{
    const char *why = body && len ? body : "";
    int n = (int)strcspn(why, "\n"), code;

    if (status == 200)
        return 0;
    switch (status) {
    case 404:
        code = HVDD_ENOTFOUND;
        break;
    case 408:
        code = HVDD_ETIMEOUT;
        break;
    case 410: /* the job aborted, or a rejoin of a worker left out */
        code =
            strncmp(why, "job aborted", 11) == 0 ? HVDD_EABORTED : HVDD_EGONE;
        break;
    default:
        code = status >= 400 && status < 500 ? HVDD_EREFUSED : HVDD_EPROTO;
    }
    if (code == HVDD_EREFUSED || code == HVDD_EPROTO)
        snprintf(err, errlen, "%s: HTTP %d: %.*s", what, status, n, why);
    else
        snprintf(err, errlen, "%s: %.*s", what, n, why);
    return code;
}
