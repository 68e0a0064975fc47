/* The element loops of libcollective's reductions (elementwise.c, built
 * with -O3): used by the comm's small-buffer path and by the transports
 * alike, so they depend on nothing but the public types. Private to
 * libcollective. */
#ifndef COLL_ELEMENTWISE_H
#define COLL_ELEMENTWISE_H

#include <stddef.h>

#include "collective.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst = a op b, elementwise, for every type (op is not avg; dst may be
 * a); elem_reduce_into: acc = acc op x. */
void elem_reduce_to(void *dst, const void *a, const void *b, size_t n,
                    coll_dtype dt, coll_op op);
void elem_reduce_into(void *acc, const void *x, size_t n, coll_dtype dt,
                      coll_op op);
/* avg = sum / size, in the element type. */
void elem_scale_avg(void *buf, size_t count, coll_dtype dt, int size);
/* dst = (a + b) / size: avg's last step, in one pass for floats (the same
 * bits as the sum, then elem_scale_avg). */
void elem_sum_scaled(void *dst, const void *a, const void *b, size_t n,
                     coll_dtype dt, int size);
/* Rank r's block of a reducescatter of count elements: count / size,
 * one more for the first count % size ranks; returns where it starts. */
size_t elem_block_start(size_t count, int size, int r, size_t *len);

/* The same loops built for this CPU's widest vectors (AVX2 on x86-64
 * where the CPU has it): the same bits as the above but for which NaN's
 * payload an op of two NaNs keeps. Only for reductions whose every
 * element is computed on this host alone (elementwise.c says why). */
void elem_reduce_to_local(void *dst, const void *a, const void *b, size_t n,
                          coll_dtype dt, coll_op op);
void elem_reduce_into_local(void *acc, const void *x, size_t n, coll_dtype dt,
                            coll_op op);
void elem_scale_avg_local(void *buf, size_t count, coll_dtype dt, int size);
void elem_sum_scaled_local(void *dst, const void *a, const void *b, size_t n,
                           coll_dtype dt, int size);
/* For the tests: the _local functions take the AVX2 loops (on 1) or the
 * plain ones (0); -1 when this CPU or build has no AVX2 loops. */
int elem_local_avx2(int on);

#ifdef __cplusplus
}
#endif

#endif
