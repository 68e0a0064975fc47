/* The end of a multi-host job as hvdd saw it (GET /v1/status): every
 * rank's exit as its agent reported it, grouped by exit code. */
#ifndef HVDRUN_SUMMARY_H
#define HVDRUN_SUMMARY_H

struct hvdd_chan;

/* Prints one line on stderr: "hvdrun: hvdd's view: N ranks; exit 0: K;
 * exit 7: rank 3 on HOST; ..." Nothing when hvdd cannot be asked. */
void hvdrun_summary_print(struct hvdd_chan *ch);

#endif
