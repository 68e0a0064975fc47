/* FAIL(fmt, ...): the test programs' way out: the message on stderr,
 * exit status 1. */
#ifndef TEST_FAIL_H
#define TEST_FAIL_H

#include <stdio.h>
#include <stdlib.h>

#define FAIL(...)                                                              \
    do {                                                                       \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
        exit(1);                                                               \
    } while (0)

#endif
