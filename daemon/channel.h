/* hvdd's end of the launcher's channel (hvdd_chan.h has the frames): a
 * thread of its own reads requests, runs them through the server
 * (hvdd_server_run) and writes the answers, never blocking on the
 * launcher: what it has not taken waits in a buffer. Private to
 * daemon/. */
#ifndef HVDD_CHANNEL_H
#define HVDD_CHANNEL_H

#include <stddef.h>

#include "server_impl.h"

typedef struct hvdd_channel hvdd_channel;

/* Serves fd (taken) for s. NULL with err. */
hvdd_channel *hvdd_channel_start(hvdd_server *s, int fd, char *err,
                                 size_t errlen);

/* c, one of ch's, was held and is released: run it again. Called under
 * the server's lock. */
void hvdd_channel_released(hvdd_channel *ch, conn *c);

/* Stops the thread (every held request was released first) and frees
 * everything. NULL accepted. */
void hvdd_channel_stop(hvdd_channel *ch);

#endif
