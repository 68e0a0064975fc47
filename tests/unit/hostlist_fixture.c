#include "hostlist_fixture.h"

#include <string.h>

cfg_hostlist list;
cfg_err list_err;

static void
setup(void)
{
    cfg_hostlist_init(&list);
    memset(&list_err, 0, sizeof(list_err));
}

static void
teardown(void)
{
    cfg_hostlist_release(&list);
}

void
hostlist_fixture_add(TCase *tc)
{
    tcase_add_checked_fixture(tc, setup, teardown);
}
