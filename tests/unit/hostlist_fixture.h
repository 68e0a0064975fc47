/* The fixture the host parser suites share (test_hostspec.c and
 * test_hostfile.c): an empty host list and a cleared error buffer before
 * each test, the list released after it. Check runs each test in its own
 * process, so no test sees another's hosts. */
#ifndef HVD_HOSTLIST_FIXTURE_H
#define HVD_HOSTLIST_FIXTURE_H

#include <check.h>

#include "hostlist.h"

/* What the parser under test fills in. */
extern cfg_hostlist list;
extern cfg_err list_err;

/* Adds that setup and teardown to tc as a checked fixture. */
void hostlist_fixture_add(TCase *tc);

#endif
