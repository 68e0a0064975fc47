// Gloo as a transport (transport.h): a store over hvdd, one TCP device on
// the interface hvdd chose, and Gloo's own algorithms for every host
// collective, with every exception caught here: the only C++ in the tree.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include "elementwise.h"
#include "transport.h"

namespace
{

// The C++ side of a Gloo transport.
struct gloo_state {
    transport_spec spec;
    std::shared_ptr<gloo::transport::Device> device;
    std::shared_ptr<gloo::rendezvous::Context> context;
    std::chrono::milliseconds timeout;
    uint32_t tag = 0;
};

// What the comm holds: plain data, so that a transport * is its first
// member's address.
struct gloo_transport {
    transport base;
    gloo_state *state;
};

gloo_state *
of(transport *t)
{
    return reinterpret_cast<gloo_transport *>(t)->state;
}

// Runs fn, turning every exception into a code and a message. After a
// failure the context is dropped, which closes every connection of this
// rank: the peers that wait on it fail at once, not after their timeout
// (a rank whose neighbours both live would wait for one that waits for
// the dead), as the TCP ring breaks its streams.
template <typename F>
int
guarded(gloo_state *g, const char *what, char *err, size_t errlen, F fn)
{
    try {
        fn();
        return 0;
    } catch (const std::exception &e) {
        snprintf(err, errlen, "%s: %s", what, e.what());
    } catch (...) {
        snprintf(err, errlen, "%s: unknown failure", what);
    }
    g->context.reset();
    g->device.reset();
    return COLL_ETRANSPORT;
}

// Gloo's key-value needs over hvdd's store. get() blocks until the key
// exists (Gloo asks for keys before they are set) or the deadline passes.
class HvddStore : public gloo::rendezvous::Store
{
  public:
    HvddStore(hvdd_client *c, std::string scope, int timeout_ms)
        : client_(c), scope_(std::move(scope)), timeout_ms_(timeout_ms)
    {
    }

    void set(const std::string &key, const std::vector<char> &data) override
    {
        int r = hvdd_client_put(client_, scope_.c_str(), name(key).c_str(),
                                data.data(), data.size());
        if (r != 0)
            throw std::runtime_error(std::string("store set: ") +
                                     hvdd_client_error(client_));
    }

    std::vector<char> get(const std::string &key) override
    {
        char *data = nullptr;
        size_t len = 0;
        int r = fetch(key, timeout_ms_, &data, &len);
        if (r != 0)
            throw std::runtime_error("store get '" + key +
                                     "': " + hvdd_client_error(client_));
        std::vector<char> v(data, data + len);
        free(data);
        return v;
    }

    void wait(const std::vector<std::string> &keys) override
    {
        wait(keys, std::chrono::milliseconds(timeout_ms_));
    }

    void wait(const std::vector<std::string> &keys,
              const std::chrono::milliseconds &timeout) override
    {
        for (const auto &k : keys)
            get_within(k, (int)timeout.count());
    }

  private:
    // hvdd names may not hold '/', which PrefixStore puts between parts.
    static std::string name(std::string key)
    {
        std::replace(key.begin(), key.end(), '/', '|');
        return key;
    }

    void get_within(const std::string &key, int ms)
    {
        char *data = nullptr;
        size_t len = 0;
        if (fetch(key, ms, &data, &len) != 0)
            throw std::runtime_error("store wait '" + key +
                                     "': " + hvdd_client_error(client_));
        free(data);
    }

    // Long-polls in slices, so that a wait never outlives the deadline.
    int fetch(const std::string &key, int ms, char **data, size_t *len)
    {
        auto end =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        for (;;) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            end - std::chrono::steady_clock::now())
                            .count();
            int r = hvdd_client_get(
                client_, scope_.c_str(), name(key).c_str(),
                (int)std::max<long>(1, std::min<long>(left, 30000)), data, len);
            if (r != HVDD_ENOTFOUND || left <= 0)
                return r;
        }
    }

    hvdd_client *client_;
    std::string scope_;
    int timeout_ms_;
};

int
gt_connect(transport *t, const char *what, char *err, size_t errlen)
{
    gloo_state *g = of(t);
    hvdd_client *client = g->spec.open_store();

    if (client == nullptr) {
        snprintf(err, errlen, "%s: connecting Gloo: no hvdd client", what);
        return COLL_ENOMEM;
    }
    int r = guarded(g, what, err, errlen, [&] {
        gloo::transport::tcp::attr attr;
        attr.iface = g->spec.iface; // never gethostname(): it may be 127.0.0.1
        g->device = gloo::transport::tcp::CreateDevice(attr);
        g->context =
            std::make_shared<gloo::rendezvous::Context>(t->rank, t->size);
        g->context->setTimeout(g->timeout);
        HvddStore store(client, "collective", g->spec.timeout_ms);
        gloo::rendezvous::PrefixStore prefixed(g->spec.prefix, store);
        g->context->connectFullMesh(prefixed, g->device);
        // Nobody leaves before everyone has connected: a rank that went on
        // at once (and finished, closing its connections) failed a slow
        // peer still inside connectFullMesh with "Connection closed by
        // peer" (short programs on a loaded machine). Horovod ends each
        // context's set-up with a barrier too.
        gloo::BarrierOptions opts(g->context);
        opts.setTag(g->tag++);
        opts.setTimeout(g->timeout);
        gloo::barrier(opts);
    });
    hvdd_client_free(client);
    return r;
}

// A transport used before it connected, or after a failure closed it.
int
unusable(gloo_state *g, const char *what, char *err, size_t errlen)
{
    if (g->context)
        return 0;
    snprintf(err, errlen, "%s: Gloo is not connected", what);
    return COLL_ETRANSPORT;
}

// Gloo's algorithms split buffers by elements of a size: one of the four.
template <typename F>
void
by_size(size_t es, F fn)
{
    switch (es) {
    case 1:
        return fn(uint8_t());
    case 2:
        return fn(uint16_t());
    case 4:
        return fn(uint32_t());
    default:
        return fn(uint64_t());
    }
}

// recv = op over every rank's send (one buffer; send may be recv), with
// our own element loops as Gloo's reduce function: every type and op.
int
reduce_one(gloo_state *g, const void *send, void *recv, size_t count,
           coll_dtype dt, coll_op op, const char *what, char *err,
           size_t errlen)
{
    coll_op how = op == COLL_OP_AVG ? COLL_OP_SUM : op;
    size_t es = coll_dtype_size(dt);
    int r;

    if (count == 0)
        return 0;
    r = guarded(g, what, err, errlen, [&] {
        gloo::AllreduceOptions opts(g->context);
        by_size(es, [&](auto type) {
            using T = decltype(type);
            if (send != recv)
                opts.setInput(const_cast<T *>(static_cast<const T *>(send)),
                              count);
            opts.setOutput(static_cast<T *>(recv), count);
        });
        opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
        opts.setReduceFunction(
            [dt, how](void *c, const void *a, const void *b, size_t n) {
                elem_reduce_to(c, a, b, n, dt, how);
            });
        opts.setTag(g->tag++);
        opts.setTimeout(g->timeout);
        gloo::allreduce(opts);
    });
    if (r == 0 && op == COLL_OP_AVG)
        elem_scale_avg(recv, count, dt, g->spec.size);
    return r;
}

// A fused group goes through one buffer, as Horovod's Gloo path packs a
// fusion buffer.
int
gt_allreduce(transport *t, const transport_piece *piece, int n, coll_dtype dt,
             coll_op op, char *err, size_t errlen)
{
    gloo_state *g = of(t);
    size_t es = coll_dtype_size(dt), total = 0, at = 0;
    int r;

    if ((r = unusable(g, "allreduce", err, errlen)) != 0)
        return r;
    if (n == 1)
        return reduce_one(g, piece[0].send, piece[0].recv, piece[0].count, dt,
                          op, "allreduce", err, errlen);
    for (int k = 0; k < n; k++)
        total += piece[k].count;
    std::unique_ptr<char[]> buf(new (std::nothrow) char[total * es + 1]);
    if (!buf)
        return COLL_ENOMEM;
    for (int k = 0; k < n; at += piece[k++].count * es)
        if (piece[k].count)
            memcpy(buf.get() + at, piece[k].send, piece[k].count * es);
    r = reduce_one(g, buf.get(), buf.get(), total, dt, op, "allreduce", err,
                   errlen);
    at = 0;
    for (int k = 0; r == 0 && k < n; at += piece[k++].count * es)
        if (piece[k].count)
            memcpy(piece[k].recv, buf.get() + at, piece[k].count * es);
    return r;
}

int
gt_exchange(transport *t, void *all, size_t bytes, size_t /* used */,
            const char *what, char *err, size_t errlen)
{
    gloo_state *g = of(t);
    int r;

    if ((r = unusable(g, what, err, errlen)) != 0 || bytes == 0)
        return r;
    return guarded(g, what, err, errlen, [&] {
        gloo::AllgatherOptions opts(g->context); // in place: no input
        opts.setOutput(static_cast<uint8_t *>(all), bytes * (size_t)t->size);
        opts.setTag(g->tag++);
        opts.setTimeout(g->timeout);
        gloo::allgather(opts);
    });
}

int
gt_allgatherv(transport *t, const void *mine, void *all, const size_t *bytes,
              const char *what, char *err, size_t errlen)
{
    gloo_state *g = of(t);
    std::vector<size_t> counts(bytes, bytes + t->size);
    size_t at = 0, total = 0;
    int r;

    if ((r = unusable(g, what, err, errlen)) != 0)
        return r;
    for (int k = 0; k < t->size; k++)
        (k < t->rank ? at : total) += bytes[k];
    total += at;
    if (total == 0)
        return 0;
    char *slot = static_cast<char *>(all) + at;
    if (mine && mine != slot && bytes[t->rank])
        memmove(slot, mine, bytes[t->rank]); // then in place
    return guarded(g, what, err, errlen, [&] {
        gloo::AllgathervOptions opts(g->context);
        opts.setOutput(static_cast<uint8_t *>(all), counts);
        opts.setTag(g->tag++);
        opts.setTimeout(g->timeout);
        gloo::allgatherv(opts);
    });
}

int
gt_broadcast(transport *t, void *buf, size_t bytes, int root, char *err,
             size_t errlen)
{
    gloo_state *g = of(t);
    int r;

    if ((r = unusable(g, "broadcast", err, errlen)) != 0 || bytes == 0)
        return r;
    return guarded(g, "broadcast", err, errlen, [&] {
        gloo::BroadcastOptions opts(g->context);
        opts.setOutput(static_cast<uint8_t *>(buf), bytes);
        opts.setRoot(root);
        opts.setTag(g->tag++);
        opts.setTimeout(g->timeout);
        gloo::broadcast(opts);
    });
}

// This Gloo has no reduce-scatter of the new kind: Gloo's allreduce, of
// which this rank keeps its block (as the old halving-doubling class
// would give, at up to twice the traffic).
int
gt_reducescatter(transport *t, const void *send, void *recv, size_t count,
                 coll_dtype dt, coll_op op, char *err, size_t errlen)
{
    gloo_state *g = of(t);
    size_t es = coll_dtype_size(dt), len,
           start = elem_block_start(count, t->size, t->rank, &len);
    int r;

    if ((r = unusable(g, "reducescatter", err, errlen)) != 0 || count == 0)
        return r;
    std::unique_ptr<char[]> all(new (std::nothrow) char[count * es]);
    if (!all)
        return COLL_ENOMEM;
    r = reduce_one(g, send, all.get(), count, dt, op, "reducescatter", err,
                   errlen);
    if (r == 0 && len)
        memcpy(recv, all.get() + start * es, len * es);
    return r;
}

int
gt_alltoallv(transport *t, const void *send, const size_t *send_bytes,
             void *recv, const size_t *recv_bytes, const char *what, char *err,
             size_t errlen)
{
    gloo_state *g = of(t);
    int r;

    if ((r = unusable(g, what, err, errlen)) != 0)
        return r;
    return guarded(g, what, err, errlen, [&] {
        int size = t->size;
        gloo::AlltoallvOptions opts(g->context);
        opts.setInput(const_cast<uint8_t *>(static_cast<const uint8_t *>(send)),
                      std::vector<int64_t>(send_bytes, send_bytes + size));
        opts.setOutput(static_cast<uint8_t *>(recv),
                       std::vector<int64_t>(recv_bytes, recv_bytes + size));
        opts.setTag(g->tag++);
        opts.setTimeout(g->timeout);
        gloo::alltoallv(opts);
    });
}

int
gt_barrier(transport *t, const char *what, char *err, size_t errlen)
{
    gloo_state *g = of(t);
    int r;

    if ((r = unusable(g, what, err, errlen)) != 0)
        return r;
    return guarded(g, what, err, errlen, [&] {
        gloo::BarrierOptions opts(g->context);
        opts.setTag(g->tag++);
        opts.setTimeout(g->timeout);
        gloo::barrier(opts);
    });
}

void
gt_free(transport *t)
{
    explicit_bzero(of(t)->spec.secret, sizeof(of(t)->spec.secret));
    delete of(t);
    delete reinterpret_cast<gloo_transport *>(t);
}

const transport_ops gloo_ops = {
    "gloo",       gt_connect,       gt_exchange,  gt_allreduce, gt_allgatherv,
    gt_broadcast, gt_reducescatter, gt_alltoallv, gt_barrier,   gt_free,
};

} // namespace

extern "C" transport *
gloo_transport_new(const transport_spec *spec)
{
    auto *t = new (std::nothrow) gloo_transport;
    auto *g = new (std::nothrow) gloo_state;

    if (t == nullptr || g == nullptr) {
        delete t;
        delete g;
        return nullptr;
    }
    g->spec = *spec;
    g->timeout = std::chrono::milliseconds(spec->timeout_ms);
    *t = gloo_transport{transport{&gloo_ops, spec->rank, spec->size}, g};
    return &t->base;
}
