/* A NAME=VALUE list that becomes a worker's envp. */
#ifndef HVD_ENVLIST_H
#define HVD_ENVLIST_H

#include <stddef.h>

typedef struct envlist {
    char **v; /* NULL-terminated when n > 0 */
    size_t n;
    size_t cap;
} envlist;

/* Sets name to value, replacing an earlier entry. Returns 0 or -1 (out of
 * memory). */
int envlist_set(envlist *l, const char *name, const char *value);
/* Same with one "NAME=VALUE" string. */
int envlist_put(envlist *l, const char *entry);
/* Removes name's entry, if any. */
void envlist_unset(envlist *l, const char *name);
/* The value of name, or NULL. */
const char *envlist_get(const envlist *l, const char *name);
int envlist_copy(envlist *dst, const envlist *src);
/* The envp for execve: never NULL once anything was set. */
char **envlist_array(envlist *l);
void envlist_release(envlist *l);

#endif
