// What the Gloo files share: the context behind the C wall's gloo_ctx
// and the guard that turns Gloo's exceptions into codes. Private C++.
#ifndef COLL_GLOO_CTX_HH
#define COLL_GLOO_CTX_HH

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>

#include <gloo/rendezvous/context.h>
#include <gloo/transport/device.h>

#include "collective.h"
#include "gloo_backend.h"

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

#endif
