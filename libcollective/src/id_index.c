#include "id_index.h"

#include <stdlib.h>
#include <string.h>

static size_t
slot_of(int64_t id, size_t cap)
{
    uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ULL;

    return (size_t)(h >> 32) & (cap - 1);
}

long
id_index_find(const id_index *x, int64_t id)
{
    if (x->cap == 0)
        return -1;
    for (size_t s = slot_of(id, x->cap);; s = (s + 1) & (x->cap - 1)) {
        if (x->at[s] == 0)
            return -1;
        if (x->ids[s] == id)
            return (long)x->at[s] - 1;
    }
}

static void
insert(id_index *x, int64_t id, size_t pos)
{
    size_t s = slot_of(id, x->cap);

    while (x->at[s] != 0 && x->ids[s] != id)
        s = (s + 1) & (x->cap - 1);
    x->ids[s] = id;
    x->at[s] = pos + 1;
}

/* Doubles the table for n entries, keeping what is in it. */
static int
grow(id_index *x, size_t n)
{
    size_t cap = x->cap ? x->cap : 64;
    id_index bigger;

    while (cap < 2 * n)
        cap *= 2;
    if (cap == x->cap)
        return 0;
    bigger.cap = cap;
    bigger.ids = calloc(cap, sizeof(*bigger.ids));
    bigger.at = calloc(cap, sizeof(*bigger.at));
    if (bigger.ids == NULL || bigger.at == NULL) {
        free(bigger.ids);
        free(bigger.at);
        return -1;
    }
    for (size_t s = 0; s < x->cap; s++)
        if (x->at[s])
            insert(&bigger, x->ids[s], x->at[s] - 1);
    id_index_release(x);
    *x = bigger;
    return 0;
}

int
id_index_put(id_index *x, int64_t id, size_t pos, size_t n)
{
    if (grow(x, n + 1) != 0)
        return -1;
    insert(x, id, pos);
    return 0;
}

void
id_index_clear(id_index *x)
{
    if (x->cap)
        memset(x->at, 0, x->cap * sizeof(*x->at));
}

void
id_index_release(id_index *x)
{
    free(x->ids);
    free(x->at);
    memset(x, 0, sizeof(*x));
}
