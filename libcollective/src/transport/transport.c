/* Choosing a transport (COLL_TRANSPORT, COLL_SHM) and what they share. */
#include "transport.h"

#include <stdlib.h>
#include <string.h>

int
transport_kind_from_env(transport_kind *kind)
{
    const char *v = getenv("COLL_TRANSPORT");

    if (v == NULL || *v == '\0' || strcmp(v, "tcp") == 0)
        *kind = TRANSPORT_TCP;
    else if (strcmp(v, "gloo") == 0)
        *kind = TRANSPORT_GLOO;
    else
        return -1;
    return 0;
}

int
transport_shm_from_env(int *on)
{
    const char *v = getenv("COLL_SHM");

    if (v == NULL || *v == '\0' || strcmp(v, "1") == 0)
        *on = 1;
    else if (strcmp(v, "0") == 0)
        *on = 0;
    else
        return -1;
    return 0;
}

transport *
transport_new(transport_kind kind, const transport_spec *spec)
{
    if (spec->one_host)
        return shm_transport_new(spec);
    return kind == TRANSPORT_GLOO ? gloo_transport_new(spec)
                                  : tcp_transport_new(spec);
}

void
transport_free(transport *t)
{
    if (t)
        t->ops->free(t);
}

int
transport_exchange_barrier(transport *t, const char *what, char *err,
                           size_t errlen)
{
    char *bytes = calloc((size_t)t->size, 1);
    int r = bytes ? t->ops->exchange(t, bytes, 1, 1, what, err, errlen)
                  : COLL_ENOMEM;

    free(bytes);
    return r;
}

size_t *
transport_each(int size, size_t bytes)
{
    size_t *each = malloc(sizeof(*each) * (size_t)size);

    for (int k = 0; each && k < size; k++)
        each[k] = bytes;
    return each;
}

int
transport_allgather(transport *t, const void *mine, void *all, size_t bytes,
                    const char *what, char *err, size_t errlen)
{
    size_t *each = transport_each(t->size, bytes);
    int r;

    if (each == NULL)
        return COLL_ENOMEM;
    r = t->ops->allgatherv(t, mine, all, each, what, err, errlen);
    free(each);
    return r;
}
