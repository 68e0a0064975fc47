/* Helper threads of the agent that never take a process signal: the
 * agent's event loop reads SIGCHLD, SIGINT and SIGTERM from a signalfd,
 * which only works when no thread leaves them unblocked. */
#ifndef HVD_QUIET_THREAD_H
#define HVD_QUIET_THREAD_H

#include <pthread.h>

/* pthread_create with every signal blocked in the new thread. */
int quiet_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
