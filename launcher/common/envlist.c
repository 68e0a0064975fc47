#include "envlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char **
find(const envlist *l, const char *name, size_t namelen)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        if (strncmp(l->v[i], name, namelen) == 0 && l->v[i][namelen] == '=')
            return &l->v[i];
    return NULL;
}

static int
store(envlist *l, char *entry, size_t namelen)
{
    char **slot = find(l, entry, namelen);

    if (slot) {
        free(*slot);
        *slot = entry;
        return 0;
    }
    if (l->n + 2 > l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL) {
            free(entry);
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = entry;
    l->v[l->n] = NULL;
    return 0;
}

int
envlist_set(envlist *l, const char *name, const char *value)
{
    size_t nl = strlen(name), vl = strlen(value);
    char *entry = malloc(nl + vl + 2);

    if (entry == NULL)
        return -1;
    memcpy(entry, name, nl);
    entry[nl] = '=';
    memcpy(entry + nl + 1, value, vl + 1);
    return store(l, entry, nl);
}

int
envlist_put(envlist *l, const char *entry)
{
    const char *eq = strchr(entry, '=');
    char *copy;

    if (eq == NULL || eq == entry)
        return -1;
    if ((copy = strdup(entry)) == NULL)
        return -1;
    return store(l, copy, eq - entry);
}

void
envlist_unset(envlist *l, const char *name)
{
    char **slot = find(l, name, strlen(name));

    if (slot == NULL)
        return;
    free(*slot);
    memmove(slot, slot + 1, (size_t)(l->v + l->n - slot) * sizeof(*slot));
    l->n--; /* (the NULL after the last entry moved down with them) */
}

const char *
envlist_get(const envlist *l, const char *name)
{
    size_t nl = strlen(name);
    char **slot = find(l, name, nl);

    return slot ? *slot + nl + 1 : NULL;
}

int
envlist_copy(envlist *dst, const envlist *src)
{
    size_t i;

    for (i = 0; i < src->n; i++)
        if (envlist_put(dst, src->v[i]) != 0)
            return -1;
    return 0;
}

char **
envlist_array(envlist *l)
{
    static char *empty[] = {NULL};

    return l->n ? l->v : empty;
}

void
envlist_release(envlist *l)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}
