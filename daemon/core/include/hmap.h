/* A string-keyed hash map with chaining; keys are copied, values are the
 * caller's. Not thread-safe. */
#ifndef HVDD_HMAP_H
#define HVDD_HMAP_H

#include <stddef.h>

typedef struct hmap_entry {
    struct hmap_entry *next;
    size_t hash;
    void *value;
    size_t keylen;
    char key[]; /* NUL-terminated */
} hmap_entry;

typedef struct hmap {
    hmap_entry **buckets;
    size_t nbuckets; /* a power of two */
    size_t count;
} hmap;

void hvdd_hmap_init(hmap *m);
/* Frees the entries; calls free_value on each value when not NULL. */
void hvdd_hmap_release(hmap *m, void (*free_value)(void *));

/* The value stored under key, or NULL. */
void *hvdd_hmap_get(const hmap *m, const char *key);
/* Stores value under key, replacing (and returning through *old, when not
 * NULL) an earlier value. Returns 0 or -1 when out of memory. */
int hvdd_hmap_put(hmap *m, const char *key, void *value, void **old);
/* Removes key; returns its value, or NULL. */
void *hvdd_hmap_remove(hmap *m, const char *key);

/* Visits every entry; the callback may not change the map. */
void hvdd_hmap_each(const hmap *m,
                    void (*fn)(const char *key, void *value, void *arg),
                    void *arg);

#endif
