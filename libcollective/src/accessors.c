#include "collective.h"
#include "comm.h"
#include "device.h"

int
coll_rank(const coll_comm *c)
{
    return c ? c->rank : -1;
}

int
coll_size(const coll_comm *c)
{
    return c ? c->size : -1;
}

int
coll_local_rank(const coll_comm *c)
{
    return c ? c->local_rank : -1;
}

int
coll_local_size(const coll_comm *c)
{
    return c ? c->local_size : -1;
}

int
coll_cross_rank(const coll_comm *c)
{
    return c ? c->cross_rank : -1;
}

int
coll_cross_size(const coll_comm *c)
{
    return c ? c->cross_size : -1;
}

const char *
coll_strerror(int err)
{
    switch (err) {
#define COLL_ERRNO_CASE(name, val, text)                                       \
    case val:                                                                  \
        return text;
        COLL_ERRNO_MAP(COLL_ERRNO_CASE)
#undef COLL_ERRNO_CASE
    case 0:
        return "success";
    }
    return "unknown error";
}

const char *
coll_last_error(const coll_comm *c)
{
    return c ? c->last_error : coll_init_detail;
}

int
coll_nccl_built(void)
{
    return dev_nccl_version();
}
