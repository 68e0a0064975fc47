// The Gloo backend: a store over hvdd, one TCP device on the interface
// hvdd chose, and the collectives libcollective still takes from Gloo
// (alltoall(v) beyond COLL_MESH_RANKS ranks), connected when first needed,
// with every exception caught here.
#include "gloo_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include "collective.h"

// The context behind the C wall's gloo_ctx.
struct gloo_ctx {
    std::shared_ptr<gloo::transport::Device> device;
    std::shared_ptr<gloo::rendezvous::Context> context;
    std::chrono::milliseconds timeout;
    uint32_t tag = 0;
};

// Runs fn, turning every exception into a code and a message.
template <typename F>
static int
guarded(const char *what, char *err, size_t errlen, F fn)
{
    try {
        fn();
        return 0;
    } catch (const std::exception &e) {
        snprintf(err, errlen, "%s: %s", what, e.what());
    } catch (...) {
        snprintf(err, errlen, "%s: unknown failure", what);
    }
    return COLL_ETRANSPORT;
}

namespace
{

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

} // namespace

extern "C" int
gb_connect(gloo_ctx **out, hvdd_client *client, const char *scope,
           const char *prefix, int rank, int size, const char *iface,
           int timeout_ms, char *err, size_t errlen)
{
    auto *g = new (std::nothrow) gloo_ctx;

    *out = nullptr;
    if (g == nullptr)
        return COLL_ENOMEM;
    g->timeout = std::chrono::milliseconds(timeout_ms);
    int r = guarded("gloo connect", err, errlen, [&] {
        gloo::transport::tcp::attr attr;
        attr.iface = iface; // never gethostname(): it may be 127.0.0.1
        g->device = gloo::transport::tcp::CreateDevice(attr);
        g->context = std::make_shared<gloo::rendezvous::Context>(rank, size);
        g->context->setTimeout(g->timeout);
        HvddStore store(client, scope, timeout_ms);
        gloo::rendezvous::PrefixStore prefixed(prefix, store);
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
    if (r != 0) {
        delete g;
        return r;
    }
    *out = g;
    return 0;
}

extern "C" void
gb_free(gloo_ctx *g)
{
    delete g;
}

extern "C" int
gb_alltoall(gloo_ctx *g, const void *in, void *out, size_t bytes, char *err,
            size_t errlen)
{
    return guarded("alltoall", err, errlen, [&] {
        size_t total = bytes * (size_t)g->context->size;
        gloo::AlltoallOptions opts(g->context);
        opts.setInput(const_cast<uint8_t *>(static_cast<const uint8_t *>(in)),
                      total);
        opts.setOutput(static_cast<uint8_t *>(out), total);
        opts.setTag(g->tag++);
        opts.setTimeout(g->timeout);
        gloo::alltoall(opts);
    });
}

extern "C" int
gb_alltoallv(gloo_ctx *g, const void *in, const size_t *send, void *out,
             const size_t *recv, char *err, size_t errlen)
{
    return guarded("alltoallv", err, errlen, [&] {
        int size = g->context->size;
        gloo::AlltoallvOptions opts(g->context);
        opts.setInput(const_cast<uint8_t *>(static_cast<const uint8_t *>(in)),
                      std::vector<int64_t>(send, send + size));
        opts.setOutput(static_cast<uint8_t *>(out),
                       std::vector<int64_t>(recv, recv + size));
        opts.setTag(g->tag++);
        opts.setTimeout(g->timeout);
        gloo::alltoallv(opts);
    });
}
