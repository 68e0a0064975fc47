// Reduce-scatter as a ring over Gloo's point-to-point buffers (Gloo has
// no new-style reduce_scatter). Each rank sends (size - 1) / size of the
// data once, where an allreduce followed by keeping one block sends it
// twice: the reduce-scatter half of the ring, without the allgather.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include <gloo/types.h>

#include "gloo_ctx.hh"

namespace
{

// No prefix of Gloo's own collectives (gloo/types.h) uses it.
constexpr uint8_t kReduceScatterSlotPrefix = 0x0a;

// Bytes per message: a block goes in pieces of this size.
constexpr size_t kSegment = 1 << 20;

// Rank r's blocks, in elements: where each starts.
std::vector<size_t>
starts_of(const size_t *counts, int size)
{
    std::vector<size_t> start(static_cast<size_t>(size) + 1, 0);

    for (int i = 0; i < size; i++)
        start[i + 1] = start[i] + counts[i];
    return start;
}

} // namespace

extern "C" int
gb_reducescatter(gloo_ctx *g, const void *send, void *recv,
                 const size_t *counts, int dtype, int op, gb_reduce_fn reduce,
                 char *err, size_t errlen)
{
    return guarded("reducescatter", err, errlen, [&] {
        auto &ctx = g->context;
        const int size = ctx->size, rank = ctx->rank;
        const int right = (rank + 1) % size, left = (rank + size - 1) % size;
        const auto dt = static_cast<coll_dtype>(dtype);
        const size_t es = coll_dtype_size(dt), seg = kSegment / es * es;
        const auto start = starts_of(counts, size);
        const size_t most = *std::max_element(counts, counts + size) * es;
        const char *mine = static_cast<const char *>(send);
        // the blocks reduced so far, two in turn: one is sent while the
        // next is reduced (none with two ranks: the one step ends in recv)
        std::unique_ptr<char[]> partial(new char[size > 2 ? 2 * most : 1]);
        std::unique_ptr<char[]> tmp(new char[2 * seg]);
        std::unique_ptr<gloo::transport::UnboundBuffer> in[2] = {
            ctx->createUnboundBuffer(tmp.get(), seg),
            ctx->createUnboundBuffer(tmp.get() + seg, seg)};
        auto slot = gloo::Slot::build(kReduceScatterSlotPrefix, g->tag++);

        // Step s: send block rank - s - 1 (this rank's own at first, then
        // what it reduced in step s - 1) to the right; receive block
        // rank - s - 2 from the left and add this rank's part. After
        // size - 1 steps block `rank` holds everyone's, in recv. Blocks go
        // in segments with two receives in flight, so that adding one
        // segment overlaps receiving the next.
        for (int s = 0; s < size - 1; s++) {
            const int sb = ((rank - s - 1) % size + size) % size;
            const int rb = ((rank - s - 2) % size + size) % size;
            const size_t sbytes = counts[sb] * es, rbytes = counts[rb] * es;
            char *from = s == 0 ? const_cast<char *>(mine) + start[sb] * es
                                : partial.get() + ((s - 1) % 2) * most;
            char *into = s == size - 2 ? static_cast<char *>(recv)
                                       : partial.get() + (s % 2) * most;
            auto out = ctx->createUnboundBuffer(from, sbytes);
            size_t sends = 0;
            for (size_t off = 0; off < sbytes; off += seg, sends++)
                out->send(right, slot, off, std::min(seg, sbytes - off));
            for (size_t off = 0, k = 0; off < rbytes && k < 2; off += seg, k++)
                in[k]->recv(left, slot, 0, std::min(seg, rbytes - off));
            for (size_t off = 0, k = 0; off < rbytes; off += seg, k++) {
                const size_t len = std::min(seg, rbytes - off);
                in[k % 2]->waitRecv(g->timeout);
                if (into != mine + start[rb] * es) // not in place
                    memcpy(into + off, mine + start[rb] * es + off, len);
                reduce(into + off, tmp.get() + (k % 2) * seg, len / es, dt,
                       static_cast<coll_op>(op));
                if (off + 2 * seg < rbytes)
                    in[k % 2]->recv(left, slot, 0,
                                    std::min(seg, rbytes - off - 2 * seg));
            }
            while (sends-- > 0)
                out->waitSend(g->timeout);
        }
    });
}
