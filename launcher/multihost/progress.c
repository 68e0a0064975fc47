/* The start's progress line of progress.h. */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

void
progress_init(progress *p, int n, int wanted)
{
    p->on = wanted && isatty(STDERR_FILENO);
    p->shown = 0;
    p->n = n;
    p->ready = p->failed = -1;
}

void
progress_update(progress *p, int ready, int failed)
{
    if (!p->on || (p->shown && ready == p->ready && failed == p->failed))
        return;
    p->ready = ready;
    p->failed = failed;
    /* back to the line's start, the text, then clear what is left of
     * a longer line before */
    if (failed)
        fprintf(stderr, "\rhvdrun: connecting %d/%d hosts (%d failed)\033[K",
                ready, p->n, failed);
    else
        fprintf(stderr, "\rhvdrun: connecting %d/%d hosts\033[K", ready, p->n);
    fflush(stderr);
    p->shown = 1;
}

void
progress_clear(progress *p)
{
    if (!p->shown)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    p->shown = 0;
}
