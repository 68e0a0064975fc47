/* The comm's definition, private to libcollective. */
#ifndef COLL_COMM_H
#define COLL_COMM_H

#include <stddef.h>

struct coll_comm {
    int rank, size;
    int local_rank, local_size;
    int cross_rank, cross_size;
    char last_error[256];
};

extern _Thread_local char coll_init_detail[256];

#endif
