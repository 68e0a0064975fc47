/* Allreduce and reducescatter through the segment. The buffer (the
 * pieces of a fused group seen as one) is cut into one block per rank
 * (elem_block_start); rank r reduces block r, a sub-block per step:
 *
 *   step j: this rank copies sub-block j of every other rank's block into
 *           its area; the step; it reduces sub-block j of its own block
 *           from its own buffer and the others' areas, in rank order, into
 *           its recv and into its area of the next slot; and copies the
 *           others' reduced sub-block j - 1 out of their areas.
 *
 * Each element is reduced once, by one rank, so every rank ends with the
 * same bits; one step per sub-block, the gather of j - 1 riding on the
 * step of j. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"
#include "shm.h"

/* The pieces seen as one buffer of es-byte elements. */
typedef struct pieces {
    const transport_piece *piece;
    int n;
    size_t es;
    int stream; /* into recv with streaming stores (shm_store.c) */
    int shares; /* into the area with streaming stores (reduce_chunk) */
} pieces;

/* Copies elements at .. at + len of the pieces' send buffers to out
 * (dir 0), or in to their recv buffers (dir 1). */
static void
pieces_copy(const pieces *b, size_t at, size_t len, void *buf, int dir)
{
    size_t base = 0;

    for (int k = 0; k < b->n && len; base += b->piece[k++].count) {
        const transport_piece *pc = &b->piece[k];
        if (at >= base + pc->count)
            continue;
        size_t from = at - base,
               m = pc->count - from < len ? pc->count - from : len;
        if (dir == 0)
            memcpy(buf, (const char *)pc->send + from * b->es, m * b->es);
        else
            shm_store((char *)pc->recv + from * b->es, buf, m * b->es,
                      b->stream);
        buf = (char *)buf + m * b->es;
        at += m;
        len -= m;
    }
}

/* What a reduction of one sub-block reads: rank k's part is at
 * src[k] (this rank's own in its buffer, the others' in their areas). */
typedef struct reduction {
    const void **src;
    int size;
    coll_dtype dt;
    coll_op op;
} reduction;

/* dst = op over src[0..size) + at (elements), n of them. */
static void
reduce_run(const reduction *rd, void *dst, size_t at, size_t n)
{
    size_t off = at * coll_dtype_size(rd->dt);
    coll_op op = rd->op == COLL_OP_AVG ? COLL_OP_SUM : rd->op;

    if (rd->op == COLL_OP_AVG && rd->size == 2) {
        elem_sum_scaled_local(dst, (const char *)rd->src[0] + off,
                              (const char *)rd->src[1] + off, n, rd->dt, 2);
        return;
    }
    elem_reduce_to_local(dst, (const char *)rd->src[0] + off,
                         (const char *)rd->src[1] + off, n, rd->dt, op);
    for (int k = 2; k < rd->size; k++)
        elem_reduce_into_local(dst, (const char *)rd->src[k] + off, n, rd->dt,
                               op);
    if (rd->op == COLL_OP_AVG)
        elem_scale_avg_local(dst, n, rd->dt, rd->size);
}

/* The blocks of count elements, and the steps they take. */
typedef struct blocks {
    size_t *start, *len;
    size_t se;    /* elements per sub-block */
    size_t steps; /* sub-blocks of the largest block (block 0) */
} blocks;

static void
blocks_init(blocks *bl, const shm_transport *s, size_t count, coll_dtype dt)
{
    int p = s->base.size;

    bl->start = s->offsets;
    bl->len = bl->start + p;
    for (int k = 0; k < p; k++)
        bl->start[k] = elem_block_start(count, p, k, &bl->len[k]);
    bl->se = s->sub / coll_dtype_size(dt);
    bl->steps = (bl->len[0] + bl->se - 1) / bl->se;
}

/* Elements of sub-block j of block k. */
static size_t
sub_len(const blocks *bl, int k, size_t j)
{
    size_t at = j * bl->se;

    return at >= bl->len[k]           ? 0
           : bl->len[k] - at < bl->se ? bl->len[k] - at
                                      : bl->se;
}

/* The write half of step j: sub-block j of every other rank's block,
 * from this rank's buffer into its area. */
static void
post_subs(const shm_transport *s, const pieces *b, const blocks *bl, size_t j)
{
    unsigned char *area = shm_area(s, s->step, s->base.rank);

    for (int k = 0; k < s->base.size; k++)
        if (k != s->base.rank)
            pieces_copy(b, bl->start[k] + j * bl->se, sub_len(bl, k, j),
                        area + (size_t)k * s->sub, 0);
}

/* One reduced chunk of len elements, into d (this rank's area, or
 * reducescatter's recv) and, given recv, there too. With a CPU per rank
 * (b->shares) it is reduced into the transport's own chunk and written
 * to both places from there, into the area with streaming stores (fenced
 * before the next post): the area's lines were last read by the other
 * ranks, and an ordinary store must first take each line back from
 * their caches. 2 ranks, allreduces in long runs, medians of 3-4 in
 * turns: 1 MiB 116 -> 90 us, 64 MiB 12.1 -> 10.1 ms, 256 KiB 35 -> 26
 * us; 4 KiB and 8 B unchanged. With more ranks than CPUs a reader may
 * run on the writer's CPU, where the lines would still be cached: 4
 * ranks on 2 CPUs gained nothing that stood out of the noise. */
static void
reduce_chunk(const shm_transport *s, const pieces *b, const reduction *rd,
             size_t c, size_t len, char *d, char *recv)
{
    if (recv && b->shares) {
        reduce_run(rd, s->chunk, c, len);
        shm_store(d, s->chunk, len * b->es, 1);
        shm_store(recv, s->chunk, len * b->es, b->stream);
        return;
    }
    reduce_run(rd, d, c, len);
    if (recv)
        shm_store(recv, d, len * b->es, b->stream);
}

/* The reduction of sub-block j of this rank's block, from the step just
 * taken (step) and this rank's own buffer, into dst; with out, also into
 * the pieces' recv buffers. This rank's part is read where it lies: for a
 * fused group, a run per piece it spans (packing it first cost a copy of
 * a 1/size of the data: ResNet-50's fused step on 2 ranks took 15.4 ms,
 * against 14.4 for its 161 blocking calls). Each run goes in chunks of
 * SHM_CHUNK, copied to recv while still in the L1 cache: reducing the
 * whole sub-block and copying it after read it back from further away (a
 * 2-rank 1 MiB allreduce took 98 us in a long run, against 82 in chunks;
 * the chunk also stays in L1 through the size - 1 passes over more
 * ranks). */
static void
reduce_sub(const shm_transport *s, const pieces *b, const blocks *bl,
           uint32_t step, size_t j, void *dst, int out, coll_dtype dt,
           coll_op op)
{
    const void **src = s->src;
    int me = s->base.rank, p = s->base.size;
    size_t n = sub_len(bl, me, j), at = bl->start[me] + j * bl->se;
    size_t base = 0, done = 0, chunk = SHM_CHUNK / b->es;
    reduction rd = {src, p, dt, op};

    for (int k = 0; k < p; k++)
        src[k] = shm_area(s, step, k) + (size_t)me * s->sub;
    for (int q = 0; q < b->n && done < n; base += b->piece[q++].count) {
        const transport_piece *pc = &b->piece[q];
        size_t from = at + done - base, m;
        if (at + done >= base + pc->count)
            continue;
        m = pc->count - from < n - done ? pc->count - from : n - done;
        /* rank k's run: its area's, this rank's in the piece */
        for (int k = 0; k < p; k++)
            s->run[k] = (const char *)src[k] + done * b->es;
        s->run[me] = (const char *)pc->send + from * b->es;
        rd.src = s->run;
        for (size_t c = 0; c < m; c += chunk)
            reduce_chunk(s, b, &rd, c, m - c < chunk ? m - c : chunk,
                         (char *)dst + (done + c) * b->es,
                         out ? (char *)pc->recv + (from + c) * b->es : NULL);
        done += m;
    }
}

/* The allreduce, its errors named by what. */
static int
allreduce_as(transport *t, const transport_piece *piece, int n, coll_dtype dt,
             coll_op op, const char *what, char *err, size_t errlen)
{
    shm_transport *s = (shm_transport *)t;
    pieces b = {piece, n, coll_dtype_size(dt), 0, 0};
    size_t count = 0;
    int p = t->size, me = t->rank, r = 0;
    blocks bl;

    for (int k = 0; k < n; k++)
        count += piece[k].count;
    b.stream = shm_streams(s, count * b.es);
    b.shares = shm_shares(s, count * b.es / (size_t)p);
    blocks_init(&bl, s, count, dt);
    for (size_t j = 0; r == 0 && count && j <= bl.steps; j++) {
        uint32_t step = s->step;
        if (j < bl.steps)
            post_subs(s, &b, &bl, j);
        if ((r = shm_step(s, what, err, errlen)) != 0)
            break;
        if (j < bl.steps) {
            /* the next slot is free: every rank has posted this step */
            unsigned char *red = shm_area(s, step + 1, me) + (size_t)p * s->sub;
            reduce_sub(s, &b, &bl, step, j, red, 1, dt, op);
            shm_store_done(b.shares); /* before the next step's post */
        }
        for (int k = 0; j > 0 && k < p; k++)
            if (k != me)
                pieces_copy(&b, bl.start[k] + (j - 1) * bl.se,
                            sub_len(&bl, k, j - 1),
                            shm_area(s, step, k) + (size_t)p * s->sub, 1);
    }
    shm_store_done(b.stream);
    return r;
}

int
shm_allreduce(transport *t, const transport_piece *piece, int n, coll_dtype dt,
              coll_op op, char *err, size_t errlen)
{
    return allreduce_as(t, piece, n, dt, op, "allreduce", err, errlen);
}

int
shm_reducescatter(transport *t, const void *send, void *recv, size_t count,
                  coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    shm_transport *s = (shm_transport *)t;
    transport_piece one = {send, NULL, count};
    pieces b = {&one, 1, coll_dtype_size(dt), 0, 0};
    blocks bl;
    int r = 0;

    blocks_init(&bl, s, count, dt);
    for (size_t j = 0; r == 0 && j < bl.steps; j++) {
        uint32_t step = s->step;
        post_subs(s, &b, &bl, j);
        if ((r = shm_step(s, "reducescatter", err, errlen)) == 0 &&
            sub_len(&bl, t->rank, j))
            reduce_sub(s, &b, &bl, step, j, (char *)recv + j * bl.se * b.es, 0,
                       dt, op);
    }
    return r;
}

/* Two allreduces of one full sub-block per rank, a step apart so that
 * the slots change places (a real call's argument check takes a step
 * too): every part of the segment an allreduce uses (all but each rank's
 * own sub-block of its own area) is written and read as the operations
 * do. Without this, on 2 ranks (2 cores) the first allreduces of 1 MiB
 * (the first size that reaches that far into the segment) ran twice as
 * slowly as later ones, and the later ones stayed slower too:
 * coll_bench's 1 MiB figure (1 warm-up, 10 timed calls), medians of 8
 * runs in turns, 105 -> 79 us. Writing every area and reading the
 * others' did about half as much (104 -> 94). Why the first use costs
 * so much is not known: the pages are mapped from the start. Every
 * transport pays it once at connect: coll_init's, the fusion thread's,
 * the first hierarchical call's, each elastic round's (about 2 ms on 2
 * ranks). Its errors are named by what, the connect's. */
int
shm_rehearse(transport *t, const char *what, char *err, size_t errlen)
{
    shm_transport *s = (shm_transport *)t;
    size_t count = (size_t)t->size * s->sub / sizeof(float);
    float *scratch;
    transport_piece all;
    int r;

    if (t->size < 2)
        return 0;
    if ((scratch = calloc(count, sizeof(float))) == NULL) {
        snprintf(err, errlen, "%s: out of memory", what);
        return COLL_ENOMEM;
    }
    all = (transport_piece){scratch, scratch, count};
    r = allreduce_as(t, &all, 1, COLL_DT_F32, COLL_OP_SUM, what, err, errlen);
    if (r == 0)
        r = shm_step(s, what, err, errlen);
    if (r == 0)
        r = allreduce_as(t, &all, 1, COLL_DT_F32, COLL_OP_SUM, what, err,
                         errlen);
    free(scratch);
    return r;
}
