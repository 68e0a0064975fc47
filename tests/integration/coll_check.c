/* Test worker for libcollective: every operation, type and op against a
 * reference computed here from the same formula every rank uses.
 * usage: coll_check [all | wide | alltoall | mismatch | unmatched | die RANK |
 *                    die-at-start RANK | die-streaming RANK |
 *                    die-alltoall RANK | stall-streaming RANK | stream |
 *                    join | hold SECONDS | reducescatter COUNT | misuse]
 * Prints "rank R: N checks passed" or the first failure (exit 1).
 * Built with COLL_CHECK_GPU (coll_check_gpu), every buffer is in GPU
 * memory (gpu_shim.h); then also: coll_check_gpu count | mixed. */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <collective.h>

#include "fail.h"
#include "typed.h"
#ifdef COLL_CHECK_GPU
#include "gpu_shim.h"
/* NCCL's avg of floats scales each value before the sum */
#define AVG_SLACK 1e-6
#else
#define AVG_SLACK 0
#endif

static int checks;

/* The value rank r contributes at index i: small, exact in every type. */
static double
value(int r, size_t i)
{
    return (double)((r * 7 + (int)(i % 13)) % 11 + 1);
}

static double
reference(coll_op op, coll_dtype dt, int size, size_t i)
{
    double acc = value(0, i);

    for (int r = 1; r < size; r++) {
        double v = value(r, i);
        acc = op == COLL_OP_MIN    ? fmin(acc, v)
              : op == COLL_OP_MAX  ? fmax(acc, v)
              : op == COLL_OP_PROD ? acc * v
                                   : acc + v;
    }
    if (op == COLL_OP_AVG && dt == COLL_DT_F32)
        acc = (double)((float)acc / (float)size); /* as computed in float */
    else if (op == COLL_OP_AVG)
        acc = dt == COLL_DT_F64 ? acc / size : floor(acc / size);
    return acc;
}

/* got is the reference's value: exactly, or for avg within AVG_SLACK. */
static int
matches(double got, double want, coll_op op)
{
    return got == want ||
           (op == COLL_OP_AVG && fabs(got - want) <= AVG_SLACK * fabs(want));
}

static void
check_allreduce(coll_comm *c, coll_dtype dt, coll_op op, size_t n, int in_place)
{
    size_t es = coll_dtype_size(dt);
    char *send = malloc(n * es + 1), *recv = malloc(n * es + 1);
    int r, rank = coll_rank(c), size = coll_size(c);

    for (size_t i = 0; i < n; i++)
        typed_put(send, dt, i, value(rank, i));
    r = coll_allreduce(c, send, in_place ? send : recv, n, dt, op);
    if (r != 0)
        FAIL("allreduce dt %d op %d n %zu: %s: %s", dt, op, n, coll_strerror(r),
             coll_last_error(c));
    for (size_t i = 0; i < n; i++) {
        double got = typed_get(in_place ? send : recv, dt, i);
        double want = reference(op, dt, size, i);
        if (!matches(got, want, op))
            FAIL("allreduce dt %d op %d n %zu in_place %d: [%zu] = %.17g, want "
                 "%.17g",
                 dt, op, n, in_place, i, got, want);
    }
    checks++;
    free(send);
    free(recv);
}

static void
check_broadcast_allgather(coll_comm *c, size_t n)
{
    int rank = coll_rank(c), size = coll_size(c);
    /* the last rank, the first and one between: on hosts of several
     * ranks, a root that is and one that is not its host's first */
    int roots[] = {size - 1, 0, size / 2};
    double *buf = malloc(n * sizeof(double) + 8);
    double *all = malloc(n * size * sizeof(double) + 8);
    int r;

    for (int j = 0; j < 3; j++) {
        int root = roots[j];
        for (size_t i = 0; i < n; i++)
            buf[i] = rank == root ? value(root, i) + j + 0.5 : -1;
        if ((r = coll_broadcast(c, buf, n, COLL_DT_F64, root)) != 0)
            FAIL("broadcast: %s: %s", coll_strerror(r), coll_last_error(c));
        for (size_t i = 0; i < n; i++)
            if (buf[i] != value(root, i) + j + 0.5)
                FAIL("broadcast n %zu from %d: [%zu] = %g", n, root, i, buf[i]);
    }
    for (size_t i = 0; i < n; i++)
        buf[i] = value(rank, i);
    if ((r = coll_allgather(c, buf, all, n, COLL_DT_F64)) != 0)
        FAIL("allgather: %s: %s", coll_strerror(r), coll_last_error(c));
    for (int k = 0; k < size; k++)
        for (size_t i = 0; i < n; i++)
            if (all[k * n + i] != value(k, i))
                FAIL("allgather n %zu: rank %d [%zu] = %g", n, k, i,
                     all[k * n + i]);
    checks += 2;
    free(buf);
    free(all);
}

/* Values whose op gives different bits in the two orders: +0 and -0
 * (MIN and MAX keep one operand), NaNs of different payloads (a sum or
 * MIN of two keeps one's), a NaN on some ranks only; then every rank's
 * result is gathered and must be the same bits on every rank, on each
 * path (the argument check's exchange, recursive doubling, the ring),
 * and the NaNs NaNs. */
#ifndef COLL_CHECK_GPU
static void
put_odd_value(float *f, int rank, size_t i)
{
    uint32_t bits;

    switch (i % 4) {
    case 0: /* +0 on even ranks, -0 on odd ones */
        *f = rank % 2 ? -0.0f : 0.0f;
        return;
    case 1: /* a NaN whose sign and payload are the rank's */
        bits =
            0x7fc00000u | (uint32_t)(rank + 1) | (rank % 2 ? 0x80000000u : 0);
        memcpy(f, &bits, sizeof(bits));
        return;
    case 2: /* a NaN on every rank but the first */
        bits = 0x7fc00000u | 0x1234u;
        if (rank == 0)
            *f = 1.0f;
        else
            memcpy(f, &bits, sizeof(bits));
        return;
    default:
        *f = (float)value(rank, i);
    }
}

static void
check_same_bits(coll_comm *c, coll_op op, size_t n)
{
    int rank = coll_rank(c), size = coll_size(c), r;
    float *send = malloc(n * sizeof(float) + 4),
          *recv = malloc(n * sizeof(float) + 4),
          *all = malloc(n * size * sizeof(float) + 4);

    for (size_t i = 0; i < n; i++)
        put_odd_value(&send[i], rank, i);
    if ((r = coll_allreduce(c, send, recv, n, COLL_DT_F32, op)) != 0 ||
        (r = coll_allgather(c, recv, all, n, COLL_DT_F32)) != 0)
        FAIL("same bits op %d n %zu: %s: %s", op, n, coll_strerror(r),
             coll_last_error(c));
    for (int k = 0; k < size; k++)
        for (size_t i = 0; i < n; i++)
            if (memcmp(&all[k * n + i], &all[i], sizeof(float)) != 0) {
                uint32_t a, b;
                memcpy(&a, &all[i], 4);
                memcpy(&b, &all[k * n + i], 4);
                FAIL("allreduce op %d n %zu: [%zu] is %08x on rank 0 and "
                     "%08x on rank %d: not the same bits",
                     op, n, i, a, b, k);
            }
    for (size_t i = 1; i < n; i += 4)
        if (!isnan(all[i]) || (size > 1 && i + 1 < n && !isnan(all[i + 1])))
            FAIL("allreduce op %d n %zu: [%zu] is not a NaN", op, n, i);
    checks++;
    free(send);
    free(recv);
    free(all);
}
#endif

/* 16-bit floats, with values exact in them: sums up to 44 are exact in
 * bf16 and f16; avg within rounding. */
static float
half_get(const uint16_t *buf, coll_dtype dt, size_t i)
{
    if (dt == COLL_DT_BF16) {
        uint32_t u = (uint32_t)buf[i] << 16;
        float f;
        memcpy(&f, &u, sizeof(f));
        return f;
    }
    /* binary16 by hand (compilers' _Float16 is not everywhere: clang 14
     * on x86-64 has none): sign, 5 exponent bits, 10 mantissa bits */
    int sign = buf[i] >> 15, e = (buf[i] >> 10) & 31, m = buf[i] & 1023;
    float v = e == 0    ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m + 1024), e - 25);
    return sign ? -v : v;
}

static uint16_t
half_of(coll_dtype dt, float f)
{
    uint16_t out;

    if (dt == COLL_DT_BF16) { /* exact for the small integers used here */
        uint32_t u;
        memcpy(&u, &f, sizeof(u));
        return (uint16_t)(u >> 16);
    }
    /* binary16 of a normal value exact in it (the small integers here;
     * anything else is the test's own mistake): f = 2m * 2^(e-1), 2m in
     * [1, 2), a 10-bit mantissa and a biased exponent e + 14 in 1..30 */
    int e;
    float m = frexpf(fabsf(f), &e), mant = (2 * m - 1) * 1024;
    if (f == 0)
        return signbit(f) ? 0x8000 : 0;
    if (!isfinite(f) || e + 14 < 1 || e + 14 > 30 || mant != floorf(mant))
        FAIL("half_of: %g is not a normal binary16 value exactly", f);
    out = (uint16_t)((e + 14) << 10) + (uint16_t)mant;
    return f < 0 ? (uint16_t)(out | 0x8000) : out;
}

static void
check_half(coll_comm *c, coll_dtype dt, size_t n)
{
    uint16_t *buf = malloc(n * sizeof(*buf));
    int rank = coll_rank(c), size = coll_size(c), r;

    if (buf == NULL)
        FAIL("out of memory");
    for (int op = COLL_OP_SUM; op <= COLL_OP_MAX; op++) {
        for (size_t i = 0; i < n; i++)
            buf[i] = half_of(dt, (float)value(rank, i));
        if ((r = coll_allreduce(c, buf, buf, n, dt, op)) != 0)
            FAIL("allreduce 16-bit dt %d op %d: %s", dt, op,
                 coll_last_error(c));
        for (size_t i = 0; i < n; i++) {
            double want = reference(op, COLL_DT_F64, size, i);
            double got = half_get(buf, dt, i);
            if (op == COLL_OP_AVG ? fabs(got - want) > want * 0.01
                                  : got != want)
                FAIL("allreduce 16-bit dt %d op %d n %zu: [%zu] = %g, want %g",
                     dt, op, n, i, got, want);
        }
        checks++;
    }
    free(buf);
}

/* allgatherv, alltoall, alltoallv and reducescatter with uneven counts */
static void
check_v_variants(coll_comm *c)
{
    int rank = coll_rank(c), n = coll_size(c), r;
    size_t counts[64], sc[64], rc[64], off = 0;
    double out[4096], in[256];

    for (int k = 0; k < n; k++)
        counts[k] = (size_t)k + 1;
    for (size_t i = 0; i < counts[rank]; i++)
        in[i] = value(rank, i);
    if ((r = coll_allgatherv(c, in, counts[rank], out, counts, COLL_DT_F64)))
        FAIL("allgatherv: %s", coll_last_error(c));
    for (int k = 0; k < n; off += counts[k++])
        for (size_t i = 0; i < counts[k]; i++)
            if (out[off + i] != value(k, i))
                FAIL("allgatherv: rank %d [%zu] = %g", k, i, out[off + i]);
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < 3; i++)
            in[k * 3 + i] = 100 * rank + 10 * k + (double)i;
    if ((r = coll_alltoall(c, in, out, 3, COLL_DT_F64)))
        FAIL("alltoall: %s", coll_last_error(c));
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < 3; i++)
            if (out[k * 3 + i] != 100 * k + 10 * rank + (double)i)
                FAIL("alltoall: from %d [%zu] = %g", k, i, out[k * 3 + i]);
    off = 0;
    for (int k = 0; k < n; k++) {
        sc[k] = (size_t)(rank + k) % 3 + 1; /* symmetric: rc[k] == sc[k] */
        rc[k] = sc[k];
        for (size_t i = 0; i < sc[k]; i++)
            in[off++] = 1000 * rank + k;
    }
    if ((r = coll_alltoallv(c, in, sc, out, rc, COLL_DT_F64)))
        FAIL("alltoallv: %s", coll_last_error(c));
    off = 0;
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < rc[k]; i++, off++)
            if (out[off] != 1000 * k + rank)
                FAIL("alltoallv: from %d = %g", k, out[off]);
    size_t count = 3 * (size_t)n + 1, block = count / n, start;
    for (size_t i = 0; i < count; i++)
        in[i] = value(rank, i);
    start =
        block * (size_t)rank +
        ((size_t)rank < count % (size_t)n ? (size_t)rank : count % (size_t)n);
    block += (size_t)rank < count % n;
    if ((r = coll_reducescatter(c, in, out, count, COLL_DT_F64, COLL_OP_SUM)))
        FAIL("reducescatter: %s", coll_last_error(c));
    for (size_t i = 0; i < block; i++)
        if (out[i] != reference(COLL_OP_SUM, COLL_DT_F64, n, start + i))
            FAIL("reducescatter: [%zu] = %g", start + i, out[i]);
    checks += 4;
}

/* reducescatter of n elements (uneven blocks when size does not divide
 * n): small ones go with the check, large ones round the ring. */
static void
check_reducescatter(coll_comm *c, size_t n, coll_dtype dt, coll_op op)
{
    size_t es = coll_dtype_size(dt), size = (size_t)coll_size(c);
    size_t rank = (size_t)coll_rank(c), len = n / size + (rank < n % size);
    size_t start = n / size * rank + (rank < n % size ? rank : n % size);
    char *in = malloc(n * es + 1), *out = malloc(len * es + 1);
    int r;

    for (size_t i = 0; i < n; i++)
        typed_put(in, dt, i, value((int)rank, i));
    if ((r = coll_reducescatter(c, in, out, n, dt, op)) != 0)
        FAIL("reducescatter n %zu dt %d op %d: %s", n, dt, op,
             coll_last_error(c));
    for (size_t i = 0; i < len; i++) {
        double got = typed_get(out, dt, i);
        double want = reference(op, dt, (int)size, start + i);
        if (!matches(got, want, op))
            FAIL("reducescatter n %zu dt %d op %d: [%zu] = %.17g, want %.17g",
                 n, dt, op, start + i, got, want);
    }
    free(in);
    free(out);
    checks++;
}

/* What rank `from` sends rank `to` in check_alltoall(v): exact in a
 * double for i < 2^30. */
static double
sent(int from, int to, size_t i)
{
    return 1000 * from + to + (double)i / 1024;
}

/* alltoall of count doubles per block: small blocks travel with the
 * check, larger ones on the ring's streams and chords or Gloo's alltoall
 * (beyond COLL_MESH_RANKS). */
static void
check_alltoall(coll_comm *c, size_t count)
{
    int rank = coll_rank(c), n = coll_size(c), r;
    double *in = malloc(count * (size_t)n * sizeof(double) + 1);
    double *out = malloc(count * (size_t)n * sizeof(double) + 1);

    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < count; i++)
            in[(size_t)k * count + i] = sent(rank, k, i);
    if ((r = coll_alltoall(c, in, out, count, COLL_DT_F64)))
        FAIL("alltoall %zu: %s", count, coll_last_error(c));
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < count; i++)
            if (out[(size_t)k * count + i] != sent(k, rank, i))
                FAIL("alltoall %zu: from %d [%zu] = %g", count, k, i,
                     out[(size_t)k * count + i]);
    free(in);
    free(out);
    checks++;
}

/* How many elements rank `from` sends rank `to` in check_alltoallv: not
 * what `to` sends `from`, and with base 0 some pairs send nothing. */
static size_t
pair_count(int from, int to, size_t base)
{
    return base + (size_t)(2 * from + to) % 5;
}

/* alltoallv with uneven blocks, each pair's count differing from the
 * reverse pair's: small enough to travel with the check (base 0), on the
 * ring's streams and chords or Gloo's alltoallv (600), larger than the
 * sockets' buffers (1000003: 8 MB blocks). */
static void
check_alltoallv(coll_comm *c, size_t base)
{
    int rank = coll_rank(c), n = coll_size(c), r;
    size_t sc[64], rc[64], sent_total = 0, recv_total = 0, off = 0;
    double *in, *out;

    for (int k = 0; k < n; k++) {
        sent_total += sc[k] = pair_count(rank, k, base);
        recv_total += rc[k] = pair_count(k, rank, base);
    }
    in = malloc(sent_total * sizeof(double) + 1);
    out = malloc(recv_total * sizeof(double) + 1);
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < sc[k]; i++)
            in[off++] = sent(rank, k, i);
    if ((r = coll_alltoallv(c, in, sc, out, rc, COLL_DT_F64)))
        FAIL("alltoallv %zu: %s", base, coll_last_error(c));
    off = 0;
    for (int k = 0; k < n; k++)
        for (size_t i = 0; i < rc[k]; i++, off++)
            if (out[off] != sent(k, rank, i))
                FAIL("alltoallv %zu: from %d [%zu] = %g", base, k, i, out[off]);
    free(in);
    free(out);
    checks++;
}

/* allgatherv of uneven parts of about base doubles: in log2(size) steps
 * up to 4 MiB in all, round the ring beyond */
static void
check_allgatherv(coll_comm *c, size_t base)
{
    int rank = coll_rank(c), n = coll_size(c), r;
    size_t counts[64], total = 0, off = 0;
    double *in, *out;

    for (int k = 0; k < n; k++)
        total += counts[k] = base + 37 * (size_t)k;
    in = malloc(counts[rank] * sizeof(double));
    out = malloc(total * sizeof(double));
    for (size_t i = 0; i < counts[rank]; i++)
        in[i] = sent(rank, 0, i);
    if ((r = coll_allgatherv(c, in, counts[rank], out, counts, COLL_DT_F64)))
        FAIL("allgatherv %zu: %s", base, coll_last_error(c));
    for (int k = 0; k < n; off += counts[k++])
        for (size_t i = 0; i < counts[k]; i++)
            if (out[off + i] != sent(k, 0, i))
                FAIL("allgatherv %zu: rank %d [%zu] = %g", base, k, i,
                     out[off + i]);
    free(in);
    free(out);
    checks++;
}

/* The op of async request i: sum, avg and max. Only neighbours (in rank
 * 0's order) of one op fuse, so the ops come in runs along that order:
 * rank 0 queues request i = 7k mod 40 k-th, so k = 23i mod 40. */
static coll_op
async_op(int i)
{
    int k = i * 23 % 40;

    return k < 20 ? COLL_OP_SUM : k < 30 ? COLL_OP_AVG : COLL_OP_MAX;
}

/* 40 named requests queued in a different order on every rank, of several
 * sizes (one larger than a small fusion buffer), types and ops. */
/* Request i's count: mostly small, but grad/6 spans several of the
 * ring's 256 KiB segments and every eighth is about one, so that
 * segments and blocks start inside pieces all along a fused group; two
 * are empty. */
static size_t
async_count(int i)
{
    return i == 6               ? 150001
           : i % 8 == 5         ? 60001 + (size_t)i
           : i == 11 || i == 30 ? 0
                                : (size_t)(i % 9) * 37 + 1;
}

static void
check_async(coll_comm *c)
{
    enum { N = 40 };
    float *in[N], *out[N];
    coll_request *req[N];
    int rank = coll_rank(c), size = coll_size(c);

    for (int i = 0; i < N; i++) {
        in[i] = malloc(async_count(i) * sizeof(float) + 1);
        out[i] = malloc(async_count(i) * sizeof(float) + 1);
        if (in[i] == NULL || out[i] == NULL)
            FAIL("out of memory");
        for (size_t j = 0; j < async_count(i); j++)
            in[i][j] = (float)value(rank, j + (size_t)i);
    }
    /* queued in a burst, so that one cycle fuses most of them */
    for (int k = 0; k < N; k++) {
        int i = (k * 7 + rank * 13) % N; /* a rank-dependent order */
        char name[32];
        snprintf(name, sizeof(name), "grad/%d", i);
        int r = coll_allreduce_async(c, name, in[i], out[i], async_count(i),
                                     COLL_DT_F32, async_op(i), &req[i]);
        if (r != 0)
            FAIL("allreduce_async %s: %s", name, coll_last_error(c));
    }
    for (int i = 0; i < N; i++) {
        int r = coll_wait(req[i]);
        if (r != 0)
            FAIL("wait grad/%d: %s", i, coll_last_error(c));
        for (size_t j = 0; j < async_count(i); j++) {
            double want =
                reference(async_op(i), COLL_DT_F32, size, j + (size_t)i);
            if (!matches(out[i][j], want, async_op(i)))
                FAIL("async grad/%d [%zu] = %g, want %g", i, j, out[i][j],
                     want);
        }
        free(in[i]);
        free(out[i]);
    }
    checks++;
}

static void
check_async_kinds(coll_comm *c)
{
    enum { N = 12, LEN = 300 };
    static double in[N][LEN], out[N][64 * LEN];
    coll_request *req[N];
    int rank = coll_rank(c), size = coll_size(c), r;

    for (int k = 0; k < N; k++) {
        int i = (k * 5 + rank * 7) % N;
        char name[32];
        snprintf(name, sizeof(name), "kinds/%d", i);
        for (size_t j = 0; j < LEN; j++)
            in[i][j] = value(rank, j + (size_t)i);
        if (i % 3 == 0)
            r = coll_allreduce_async(c, name, in[i], out[i], LEN, COLL_DT_F64,
                                     COLL_OP_SUM, &req[i]);
        else if (i % 3 == 1)
            r = coll_allgather_async(c, name, in[i], out[i], LEN, COLL_DT_F64,
                                     &req[i]);
        else
            r = coll_broadcast_async(c, name, in[i], LEN, COLL_DT_F64, i % size,
                                     &req[i]);
        if (r != 0)
            FAIL("async %s: %s", name, coll_last_error(c));
    }
    for (int i = 0; i < N; i++) {
        if ((r = coll_wait(req[i])) != 0)
            FAIL("wait kinds/%d: %s", i, coll_last_error(c));
        for (size_t j = 0; j < LEN; j++) {
            size_t at = j + (size_t)i;
            if (i % 3 == 0 &&
                out[i][j] != reference(COLL_OP_SUM, COLL_DT_F64, size, at))
                FAIL("allreduce_async kinds/%d [%zu] = %g", i, j, out[i][j]);
            if (i % 3 == 2 && in[i][j] != value(i % size, at))
                FAIL("broadcast_async kinds/%d [%zu] = %g", i, j, in[i][j]);
            for (int k = 0; i % 3 == 1 && k < size; k++)
                if (out[i][k * LEN + j] != value(k, at))
                    FAIL("allgather_async kinds/%d from %d [%zu] = %g", i, k, j,
                         out[i][k * LEN + j]);
        }
    }
    checks++;
}

static int
run_all(coll_comm *c)
{
    static const coll_dtype dts[] = {COLL_DT_U8,  COLL_DT_I8,  COLL_DT_I32,
                                     COLL_DT_I64, COLL_DT_F32, COLL_DT_F64};
    static const size_t sizes[] = {0, 1, 7, 1000, 1 << 20};

    for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++)
        for (int op = COLL_OP_SUM; op <= COLL_OP_PROD; op++) {
            if (op == COLL_OP_PROD && coll_dtype_size(dts[d]) == 1)
                continue; /* 11^4 does not fit in 8 bits */
            for (size_t s = 0; s < 4; s++)
                check_allreduce(c, dts[d], op, sizes[s], s % 2);
            /* recursive doubling: above what the check carries, up to
             * 64 KiB */
            check_allreduce(c, dts[d], op, 7001, op % 2);
            /* the ring: blocks of several 256 KiB segments for the wider
             * types, a count no rank count divides */
            check_allreduce(c, dts[d], op, 300007, op % 2);
        }
    check_allreduce(c, COLL_DT_F32, COLL_OP_SUM, sizes[4], 0);
    /* an odd count: halves of different sizes on two ranks */
    check_allreduce(c, COLL_DT_F64, COLL_OP_SUM, 100001, 0);
    check_allreduce(c, COLL_DT_I32, COLL_OP_MAX, 100001, 1);
#ifndef COLL_CHECK_GPU /* (NCCL's MIN and MAX are NCCL's: collective.3) */
    /* the exchange, recursive doubling and the ring, every op (avg's last
     * doubling step sums and scales in one pass) */
    for (int op = COLL_OP_SUM; op <= COLL_OP_PROD; op++)
        for (size_t s = 0; s < 3; s++)
            check_same_bits(c, (coll_op)op, (size_t[]){101, 7001, 300007}[s]);
#endif
    for (size_t s = 0; s < 5; s++)
        check_broadcast_allgather(c, sizes[s]);
    check_v_variants(c);
    check_reducescatter(c, 100003, COLL_DT_F32, COLL_OP_SUM);
    check_reducescatter(c, 100003, COLL_DT_I64, COLL_OP_MAX);
    check_reducescatter(c, 65536, COLL_DT_F64, COLL_OP_AVG);
    /* blocks of 10 MB, more than the ring's socket buffers hold: a block
     * still going out must not be overwritten by the next coming in */
    check_reducescatter(c, (size_t)coll_size(c) * 2500000 + 1, COLL_DT_F32,
                        COLL_OP_SUM);
    check_reducescatter(c, 5, COLL_DT_I32, COLL_OP_PROD);
    check_alltoall(c, 1000);
    check_alltoall(c, 700001); /* 5.6 MB blocks */
    check_alltoallv(c, 0);
    check_alltoallv(c, 600);
    check_alltoallv(c, 1000003);
    check_allgatherv(c, 1000);
    check_allgatherv(c, 300000); /* above 4 MiB in all */
    check_half(c, COLL_DT_F16, 300);
    check_half(c, COLL_DT_BF16, 300);
    check_half(c, COLL_DT_F16, 5003); /* recursive doubling */
    check_half(c, COLL_DT_F16, 200003);
    check_half(c, COLL_DT_BF16, 200003);
    check_async(c);
    check_async(c); /* the same names again, once the first are done */
    check_async_kinds(c);
#ifdef COLL_CHECK_GPU
    checks += gpu_refusals(c);
#endif
    if (coll_barrier(c) != 0)
        FAIL("barrier: %s", coll_last_error(c));
    checks++;
    printf("rank %d: %d checks passed\n", coll_rank(c), checks);
    return 0;
}

static int victim_signal;

static void
signal_self(int sig)
{
    (void)sig;
    kill(getpid(), victim_signal);
}

/* One large collective of fail_streaming's: an allreduce of n floats,
 * or with to_all an alltoall of n / size per rank. */
static int
streaming_op(coll_comm *c, float *big, float *out, size_t n, int to_all)
{
    if (to_all)
        return coll_alltoall(c, big, out, n / (size_t)coll_size(c),
                             COLL_DT_F32);
    return coll_allreduce(c, big, big, n, COLL_DT_F32, COLL_OP_SUM);
}

/* Rank victim gets sig (SIGKILL: dies; SIGSTOP: hangs) 300 ms into a run
 * of large allreduces (or alltoalls), while data streams between ranks
 * (the exchange before each is a small part of it). The others must
 * each get an error of that operation, soon: a survivor whose streams go
 * to live ranks learns of it only from them. 1 when this rank got an
 * error. */
static int
fail_streaming(coll_comm *c, int victim, int sig, int to_all)
{
    size_t n = 4 << 20;
    float *big = calloc(n, sizeof(float)), *out = malloc(n * sizeof(float));
    int r = big && out ? streaming_op(c, big, out, n, to_all) : COLL_ENOMEM;

    if (r == 0 && coll_rank(c) == victim) {
        struct itimerval soon = {{0, 0}, {0, 300000}};
        victim_signal = sig;
        signal(SIGALRM, signal_self);
        setitimer(ITIMER_REAL, &soon, NULL);
    }
    for (int i = 0; r == 0 && i < 2000; i++)
        r = streaming_op(c, big, out, n, to_all);
    printf("rank %d: %s: %s\n", coll_rank(c), coll_strerror(r),
           coll_last_error(c));
    fflush(stdout); /* before hvdrun's teardown can end this rank */
    free(big);
    free(out);
    return r != 0;
}

/* alltoall(v) alone, for 5 and 6 ranks: there a rank's chords go to
 * ranks that are not the ones they come from. */
static int
run_alltoall(coll_comm *c)
{
    check_alltoall(c, 3);
    check_alltoall(c, 1000);
    check_alltoall(c, 300001);
    check_alltoallv(c, 0);
    check_alltoallv(c, 600);
    check_alltoallv(c, 200003);
    printf("rank %d: %d checks passed\n", coll_rank(c), checks);
    return 0;
}

/* Horovod's join: rank r has r + 1 batches; each batch's async allreduce
 * gets zeros from the ranks that joined already (an average still divides
 * by the size), the last rank to join is the one with the most batches,
 * and the comm works as before afterwards. */
static int
run_join(coll_comm *c)
{
    int me = coll_rank(c), n = coll_size(c), last = -1, r;
    float v[64], out[64];
    coll_request *q;

    for (int i = 0; i <= me; i++) {
        char name[32];
        snprintf(name, sizeof(name), "batch.%d", i);
        for (int j = 0; j < 64; j++)
            v[j] = (float)(me + 1) * (float)(j + 1);
        if ((r = coll_allreduce_async(c, name, v, out, 64, COLL_DT_F32,
                                      COLL_OP_AVG, &q)) != 0 ||
            (r = coll_wait(q)) != 0)
            FAIL("rank %d: join: %s: %s", me, name, coll_last_error(c));
        for (int j = 0; j < 64; j++) {
            float want = 0; /* ranks i.. still have batch i */
            for (int k = i; k < n; k++)
                want += (float)(k + 1) * (float)(j + 1);
            if (fabsf(out[j] - want / (float)n) > 1e-4f * want)
                FAIL("rank %d: join: %s [%d] = %g, want %g", me, name, j,
                     out[j], want / n);
        }
    }
    if ((r = coll_join(c, &last)) != 0)
        FAIL("rank %d: join: %s", me, coll_last_error(c));
    if (last != n - 1)
        FAIL("rank %d: join: last rank %d, want %d", me, last, n - 1);
    check_async(c); /* and on as before */
    printf("rank %d: join passed, last %d\n", me, last);
    return 0;
}

/* A few checks on more ranks than a power of two (the control exchanges'
 * last step is short): argument checks with small data, the ring
 * allreduce, alltoall(v) (on chords or, with COLL_MESH_RANKS below the
 * size, on Gloo), the barrier and the fusion thread's cycle. */
static int
run_wide(coll_comm *c)
{
    check_allreduce(c, COLL_DT_F32, COLL_OP_SUM, 7, 0);
    check_allreduce(c, COLL_DT_F64, COLL_OP_AVG, 3001, 1);
    /* the check carries 4 KiB a rank: around that */
    check_allreduce(c, COLL_DT_F64, COLL_OP_SUM, 512, 0);
    check_allreduce(c, COLL_DT_F64, COLL_OP_MAX, 513, 1);
    check_broadcast_allgather(c, 7);
    check_alltoall(c, 1000);
    check_alltoallv(c, 600);
    if (coll_barrier(c) != 0)
        FAIL("barrier: %s", coll_last_error(c));
    check_async(c);
    printf("rank %d: %d checks passed\n", coll_rank(c), ++checks);
    return 0;
}

/* Arguments every rank gets wrong the same way: COLL_EINVAL on each, and
 * the comm still in step after. A NULL buffer with counts (alltoallv
 * crashed) and counts whose bytes wrap (a small buffer, or the small
 * path, for a huge count). Then a request waited for after coll_finalize
 * (it read the freed comm). Finalizes c. */
static int
run_misuse(coll_comm *c)
{
    size_t n = (size_t)coll_size(c), one[64], huge[64], big = SIZE_MAX / 4 + 1;
    float x[64] = {0}, y[64];
    coll_request *q;
    int bad = 0, r;

    for (size_t i = 0; i < n; i++)
        one[i] = 1, huge[i] = big;
#define EXPECT_EINVAL(call)                                                    \
    do {                                                                       \
        int e_ = (call);                                                       \
        if (e_ != COLL_EINVAL) {                                               \
            printf("rank %d: %s gave %s\n", coll_rank(c), #call,               \
                   coll_strerror(e_));                                         \
            bad = 1;                                                           \
        }                                                                      \
    } while (0)
    EXPECT_EINVAL(coll_alltoallv(c, NULL, one, y, one, COLL_DT_F32));
    EXPECT_EINVAL(coll_alltoallv(c, x, one, NULL, one, COLL_DT_F32));
    EXPECT_EINVAL(coll_alltoallv(c, x, huge, y, one, COLL_DT_F32));
    EXPECT_EINVAL(coll_allreduce(c, x, y, big, COLL_DT_F32, COLL_OP_SUM));
    EXPECT_EINVAL(coll_reducescatter(c, x, y, big, COLL_DT_F32, COLL_OP_SUM));
    EXPECT_EINVAL(coll_allreduce_fp16(c, x, y, SIZE_MAX / 2 + 1, COLL_OP_SUM));
    EXPECT_EINVAL(coll_broadcast(c, x, big, COLL_DT_F32, 0));
    EXPECT_EINVAL(coll_allgather(c, x, y, SIZE_MAX / 4 / n + 1, COLL_DT_F32));
    EXPECT_EINVAL(coll_alltoall(c, x, y, SIZE_MAX / 4 / n + 1, COLL_DT_F32));
    EXPECT_EINVAL(coll_allgatherv(c, x, big, y, huge, COLL_DT_F32));
    EXPECT_EINVAL(coll_allreduce_async(c, "huge", x, y, big, COLL_DT_F32,
                                       COLL_OP_SUM, &q));
#undef EXPECT_EINVAL
    /* a root only rank 1 gets wrong: it returns COLL_EINVAL alone, and
     * its next call (a barrier) meets the others' broadcast check, which
     * fails on every rank instead of passing (a barrier took it) */
    if (n > 1) {
        int root = coll_rank(c) == 1 ? 99 : 0;
        int rb = coll_broadcast(c, x, 4, COLL_DT_F32, root);
        if (coll_rank(c) == 1)
            rb = rb == COLL_EINVAL ? coll_barrier(c) : -1000 + rb;
        if (rb != COLL_EMISMATCH) {
            printf("rank %d: a bad root on rank 1 alone: %s\n", coll_rank(c),
                   coll_strerror(rb));
            bad = 1;
        }
    }
    /* still in step: a sum every rank checks */
    for (size_t i = 0; i < 8; i++)
        x[i] = (float)(coll_rank(c) + 1);
    if ((r = coll_allreduce(c, x, y, 8, COLL_DT_F32, COLL_OP_SUM)) != 0 ||
        y[7] != (float)(n * (n + 1) / 2)) {
        printf("rank %d: allreduce after misuse: %s, %g\n", coll_rank(c),
               coll_strerror(r), y[7]);
        bad = 1;
    }
    if ((r = coll_allreduce_async(c, "late", x, y, 8, COLL_DT_F32, COLL_OP_SUM,
                                  &q)) != 0) {
        printf("rank %d: allreduce_async: %s\n", coll_rank(c),
               coll_strerror(r));
        coll_finalize(c);
        return 1;
    }
    coll_finalize(c);
    /* the request keeps the comm's memory: a call on it is refused (it
     * ran on the freed transports) */
    if ((r = coll_barrier(c)) != COLL_EDEAD) {
        printf("rank ?: barrier after finalize: %s\n", coll_strerror(r));
        bad = 1;
    }
    r = coll_wait(q); /* done before, or dead with its comm */
    if (r != 0 && r != COLL_EDEAD) {
        printf("rank ?: wait after finalize: %s\n", coll_strerror(r));
        bad = 1;
    }
    if (!bad)
        printf("misuse passed (wait after finalize: %s)\n", coll_strerror(r));
    return bad;
}

int
main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    coll_comm *c;
    float x[16] = {0};
    int r;

    if (strstr(mode, "die") || strstr(mode, "stall")) /* see below */
        signal(SIGTERM, SIG_IGN);
#ifdef COLL_CHECK_GPU
    const char *why;
    if (strcmp(mode, "count") == 0) {
        int n = gpu_count(&why);
        printf("%d%s%s\n", n, n ? "" : " ", n ? "" : why);
        return 0;
    }
#endif
    if ((r = coll_init(&c)) != 0)
        FAIL("init: %s: %s", coll_strerror(r), coll_last_error(NULL));
#ifdef COLL_CHECK_GPU
    if (strcmp(mode, "mixed") != 0 && gpu_select(coll_local_rank(c)) != 0)
        FAIL("rank %d: cannot select a GPU", coll_rank(c));
    if (strcmp(mode, "mixed") == 0 && coll_rank(c) == 0 && gpu_select(0) != 0)
        FAIL("rank 0: cannot select a GPU");
    if (strcmp(mode, "mixed") == 0)
        r = gpu_mixed_ranks(c);
#endif
    if (strcmp(mode, "all") == 0)
        r = run_all(c);
    else if (strcmp(mode, "alltoall") == 0)
        r = run_alltoall(c);
    else if (strcmp(mode, "wide") == 0)
        r = run_wide(c);
    else if (strcmp(mode, "join") == 0)
        r = run_join(c);
    else if (strcmp(mode, "stream") == 0) {
        /* large allreduces on the ring, each checked: what an intruder
         * between two ranks would try to corrupt (trust.sh) */
        for (int k = 0; k < 20; k++)
            check_allreduce(c, COLL_DT_F64, COLL_OP_SUM, 1 << 18, k & 1);
        printf("rank %d: %d checks passed\n", coll_rank(c), checks);
        r = 0;
    } else if (strcmp(mode, "mismatch") == 0) {
        /* rank 0 sends 16 floats, the others 8 */
        r = coll_allreduce(c, x, x, coll_rank(c) == 0 ? 16 : 8, COLL_DT_F32,
                           COLL_OP_SUM);
        printf("rank %d: %s: %s\n", coll_rank(c), coll_strerror(r),
               coll_last_error(c));
        r = r == COLL_EMISMATCH ? 0 : 1;
        /* a small buffer on rank 0, a large one elsewhere: the two sizes
         * take different paths, which must still meet */
        float *big = calloc(100000, sizeof(float));
        int r1 =
            big ? coll_allreduce(c, big, big, coll_rank(c) == 0 ? 4 : 100000,
                                 COLL_DT_F32, COLL_OP_SUM)
                : COLL_ENOMEM;
        printf("rank %d: small/large: %s\n", coll_rank(c), coll_strerror(r1));
        r |= r1 == COLL_EMISMATCH ? 0 : 1;
        free(big);
        /* alltoallv receive counts that do not match what is sent */
        size_t sc[64], rc[64];
        for (int k = 0; k < coll_size(c); k++)
            sc[k] = rc[k] = 1;
        rc[0] = coll_rank(c) == 1 ? 2 : 1;
        int r2 = coll_alltoallv(c, x, sc, x, rc, COLL_DT_F32);
        printf("rank %d: alltoallv: %s\n", coll_rank(c), coll_strerror(r2));
        r |= r2 == COLL_EMISMATCH ? 0 : 1;
        /* another collective with the same count and type: both went on
         * with the other's data */
        static float gathered[8 * 64];
        int r3 = coll_rank(c) == 0
                     ? coll_allreduce(c, x, x, 8, COLL_DT_F32, COLL_OP_SUM)
                     : coll_allgather(c, x, gathered, 8, COLL_DT_F32);
        printf("rank %d: kinds: %s\n", coll_rank(c), coll_strerror(r3));
        r |= r3 == COLL_EMISMATCH ? 0 : 1;
    } else if (strcmp(mode, "misuse") == 0) {
        r = run_misuse(c);
        c = NULL; /* (finalized there) */
    } else if (strcmp(mode, "hang") == 0) {
        /* rank 1 stops (as a hung process would): its heartbeats stop */
        if (coll_rank(c) == 1)
            raise(SIGSTOP);
        r = coll_barrier(c);
    } else if (strcmp(mode, "linger") == 0) {
        /* a rank that finalized and keeps working is not a lost one */
        coll_finalize(c);
        sleep(4);
        printf("rank done\n");
        return 0;
    } else if (strcmp(mode, "die") == 0 && argc > 2) {
        /* one rank dies; the others must get an error, not hang. They
         * ignore hvdrun's SIGTERM (from the start, so no race) so that the
         * test sees what they got. */
        /* every rank joined before one dies */
        if ((r = coll_barrier(c)) == 0 &&
            coll_rank(c) == (int)strtol(argv[2], NULL, 10))
            kill(getpid(), SIGKILL);
        static float big[1 << 20];
        if (r == 0)
            r = coll_allreduce(c, big, big, 1 << 20, COLL_DT_F32, COLL_OP_SUM);
        printf("rank %d: %s: %s\n", coll_rank(c), coll_strerror(r),
               coll_last_error(c));
        r = coll_allreduce(c, big, big, 4, COLL_DT_F32, COLL_OP_SUM);
        printf("rank %d: after: %s\n", coll_rank(c), coll_strerror(r));
        r = 0;
    } else if (strcmp(mode, "unmatched") == 0) {
        /* each rank queues a name no other rank queues: after the timeout
         * each gets an error naming the others, and the comm goes on */
        char name[32];
        float v = 1;
        coll_request *q;
        snprintf(name, sizeof(name), "only-%d", coll_rank(c));
        r = coll_allreduce_async(c, name, &v, &v, 1, COLL_DT_F32, COLL_OP_SUM,
                                 &q);
        if (r == 0)
            r = coll_wait(q);
        printf("rank %d: unmatched: %s: %s\n", coll_rank(c), coll_strerror(r),
               coll_last_error(c));
        r = coll_allreduce_async(c, "everywhere", &v, &v, 1, COLL_DT_F32,
                                 COLL_OP_SUM, &q);
        if (r == 0)
            r = coll_wait(q);
        printf("rank %d: then: %s, %g\n", coll_rank(c), coll_strerror(r), v);
        r = 0;
    } else if (strcmp(mode, "die-at-start") == 0 && argc > 2) {
        /* one rank dies before any collective: the others' first one
         * must fail at once, not after the timeout */
        if (coll_rank(c) == (int)strtol(argv[2], NULL, 10))
            kill(getpid(), SIGKILL);
        r = coll_barrier(c);
        printf("rank %d: %s: %s\n", coll_rank(c), coll_strerror(r),
               coll_last_error(c));
        r = 0;
    } else if (strcmp(mode, "hold") == 0 && argc > 2) {
        /* a job that stays up, connected, for a test to look at; its
         * allreduce is large enough for the transports (and the
         * hierarchical one) to be used, not only the argument check */
        enum { N = 65536 };
        static float v[N];
        for (int i = 0; i < N; i++)
            v[i] = (float)(coll_rank(c) + i % 7);
        r = coll_allreduce(c, v, v, N, COLL_DT_F32, COLL_OP_SUM);
        float want = (float)(coll_size(c) * (coll_size(c) - 1) / 2 +
                             coll_size(c) * (N - 1) % 7);
        /* and the fusion thread's transports (the same sum, async) */
        static float a[N];
        coll_request *q = NULL;
        for (int i = 0; i < N; i++)
            a[i] = (float)(coll_rank(c) + i % 7);
        if (r == 0)
            r = coll_allreduce_async(c, "hold", a, a, N, COLL_DT_F32,
                                     COLL_OP_SUM, &q);
        if (r == 0)
            r = coll_wait(q);
        if (r == 0 && a[N - 1] != want)
            r = 1;
        /* and an allgather too large for the argument check to carry */
        enum { G = 8192 };
        float *g = malloc(sizeof(float) * G * (size_t)coll_size(c));
        for (int i = 0; r == 0 && g && i < G; i++)
            a[i] = (float)(coll_rank(c) * G + i);
        if (r == 0)
            r = g ? coll_allgather(c, a, g, G, COLL_DT_F32) : 1;
        for (int i = 0; r == 0 && i < G * coll_size(c); i++)
            r = g[i] != (float)i;
        free(g);
        /* and a broadcast from the last rank (on hosts of several ranks,
         * its local steps share memory) */
        for (int i = 0; i < N; i++)
            a[i] = coll_rank(c) == coll_size(c) - 1 ? (float)(i % 5) : -1.0f;
        if (r == 0)
            r = coll_broadcast(c, a, N, COLL_DT_F32, coll_size(c) - 1);
        for (int i = 0; r == 0 && i < N; i++)
            r = a[i] != (float)(i % 5);
        printf("rank %d: holding, pid %d, %s\n", coll_rank(c), (int)getpid(),
               r == 0 && v[N - 1] == want ? "right" : "wrong");
        fflush(stdout);
        sleep((unsigned)strtoul(argv[2], NULL, 10));
    } else if (strcmp(mode, "die-streaming") == 0 && argc > 2) {
        fail_streaming(c, (int)strtol(argv[2], NULL, 10), SIGKILL, 0);
    } else if (strcmp(mode, "die-alltoall") == 0 && argc > 2) {
        fail_streaming(c, (int)strtol(argv[2], NULL, 10), SIGKILL, 1);
    } else if (strcmp(mode, "reducescatter") == 0 && argc > 2) {
        /* one large f32 sum alone: a test counts what crosses hosts */
        check_reducescatter(c, strtoull(argv[2], NULL, 10), COLL_DT_F32,
                            COLL_OP_SUM);
        printf("rank %d: %d checks passed\n", coll_rank(c), checks);
    } else if (strcmp(mode, "stall-streaming") == 0 && argc > 2) {
        /* survivors fail (exit 1), so that hvdrun ends the stopped one */
        r = fail_streaming(c, (int)strtol(argv[2], NULL, 10), SIGSTOP, 0);
    }
    coll_finalize(c);
    return r;
}
