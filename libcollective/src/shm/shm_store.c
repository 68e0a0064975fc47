/* Streaming copies, for two uses: an allreduce's reduced chunks into its
 * area (shm_shares; why in shm_reduce.c's reduce_chunk), and results
 * larger than the last level cache into the caller's buffers. Such a
 * result cannot stay in the cache: every line an ordinary store writes
 * is first read from memory (to own it), then written back when
 * evicted. Streaming (non-temporal) stores skip the read. coll_bench on
 * 2 cores with a 32 MiB L3, medians of 5 runs (2 ranks) and 3 (4 ranks)
 * in turns, 64 MiB, before -> after: 2 ranks, allreduce 14.3 -> 13.4
 * ms, broadcast 5.5 -> 4.0, allgather 8.0 -> 7.5; 4 ranks, allreduce
 * 36.2 -> 28.9, broadcast 18.6 -> 10.8 (allgather unchanged). At 16 and
 * 32 MiB no gain stood out of the noise, and a caller that reads a
 * smaller result back finds part of it in the cache, so those keep
 * ordinary stores. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "shm.h"

/* When the system does not say (a VM may hide its L3, and a libc
 * other than glibc has no name for it): a common size of a server's L3.
 * Not the L2: results of a few MiB gained nothing from streaming, and a
 * caller reading one back finds it in the cache. */
#define SHM_LLC_GUESS (32u << 20)

size_t
shm_last_level_cache(void)
{
    long v = 0;

#ifdef _SC_LEVEL3_CACHE_SIZE
    v = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    return v > 0 ? (size_t)v : SHM_LLC_GUESS;
}

int
shm_streams(const shm_transport *t, size_t bytes)
{
#if defined(__x86_64__)
    return bytes > t->spec.stream_above;
#else
    (void)t;
    (void)bytes;
    return 0;
#endif
}

int
shm_shares(const shm_transport *t, size_t block)
{
#if defined(__x86_64__)
    return t->spec.cpu_each && block >= SHM_CHUNK;
#else
    (void)t;
    (void)block;
    return 0;
#endif
}

void
shm_store(void *dst, const void *src, size_t n, int stream)
{
#if defined(__x86_64__)
    char *d = dst;
    const char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;

    if (!stream || n < 64) {
        memcpy(dst, src, n);
        return;
    }
    memcpy(d, s, head); /* to a 16-byte boundary, which streaming needs */
    d += head, s += head, n -= head;
    for (; n >= 64; d += 64, s += 64, n -= 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, n);
#else
    (void)stream;
    memcpy(dst, src, n);
#endif
}

void
shm_store_done(int stream)
{
#if defined(__x86_64__)
    /* streaming stores are weakly ordered: make them visible before the
     * operation returns (and before any later post of a step) */
    if (stream)
        _mm_sfence();
#else
    (void)stream;
#endif
}
