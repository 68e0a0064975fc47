/* A small open-addressing index from request ids (the hash of a name, the
 * same on every rank) to positions in a caller's array: the timeline's
 * and the stall check's tables, looked up for every queued entry of
 * every rank at every cycle. Rebuilt by the caller whenever its array is
 * compacted. */
#ifndef COLL_ID_INDEX_H
#define COLL_ID_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct id_index {
    int64_t *ids;
    size_t *at; /* position + 1; 0: empty */
    size_t cap; /* a power of two, at least twice the entries */
} id_index;

/* Position of id, or -1. */
long id_index_find(const id_index *x, int64_t id);
/* Records id at position pos (n: the entries after it); 0, or -1 out of
 * memory (then the caller's lookups still work, but slowly: none). */
int id_index_put(id_index *x, int64_t id, size_t pos, size_t n);
/* Forgets everything (before the caller re-puts its compacted array). */
void id_index_clear(id_index *x);
void id_index_release(id_index *x);

#endif
