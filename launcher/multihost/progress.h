/* One updating line on a terminal while the hosts' agents start:
 * "hvdrun: connecting 37/64 hosts (2 failed)", a host counted once its
 * agent runs. Nothing when stderr is
 * not a terminal. Private to multihost/. */
#ifndef HVD_PROGRESS_H
#define HVD_PROGRESS_H

typedef struct progress {
    int on;            /* stderr is a terminal, and the line is wanted */
    int shown;         /* the line is on the screen now */
    int n;             /* hosts in all */
    int ready, failed; /* what the line on the screen says (ready: hosts
                          whose agent runs) */
} progress;

void progress_init(progress *p, int n, int wanted);
/* Draws the line when its counts changed or it was cleared. */
void progress_update(progress *p, int ready, int failed);
/* Erases the line (before anything else goes to the terminal). */
void progress_clear(progress *p);

#endif
