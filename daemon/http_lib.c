/* Loads libmicrohttpd by the soname of the library the build found
 * (HVDD_MHD_SONAME), or from the folder it found it in when that is
 * outside the system's own (HVDD_MHD_FOUND_AT), and looks up each
 * function. */
#include "http_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#if !defined(HVDD_MHD_SONAME) || !defined(HVDD_MHD_FOUND_AT)
#error "the build names libmicrohttpd's soname and where it found it"
#endif

static hvdd_http_lib lib;
static char why[300]; /* the load's error, kept for every caller */
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* (void **): POSIX's way from dlsym's object pointer to a function's */
#define FIND(field, name)                                                      \
    do {                                                                       \
        if ((*(void **)&lib.field = dlsym(h, name)) == NULL) {                 \
            missing = name;                                                    \
            goto fail;                                                         \
        }                                                                      \
    } while (0)

static void
load_once(void)
{
    void *h = dlopen(HVDD_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
    const char *missing = NULL;

    if (h == NULL) {
        snprintf(why, sizeof(why), "cannot load %s: %s", HVDD_MHD_SONAME,
                 dlerror());
        /* where the build found it, when that is not where the system
         * looks (empty otherwise) */
        if (HVDD_MHD_FOUND_AT[0] == '\0' ||
            (h = dlopen(HVDD_MHD_FOUND_AT, RTLD_NOW | RTLD_LOCAL)) == NULL)
            return;
    }
    FIND(start_daemon, "MHD_start_daemon");
    FIND(stop_daemon, "MHD_stop_daemon");
    FIND(add_connection, "MHD_add_connection");
    FIND(suspend_connection, "MHD_suspend_connection");
    FIND(resume_connection, "MHD_resume_connection");
    FIND(http_unescape, "MHD_http_unescape");
    FIND(get_connection_info, "MHD_get_connection_info");
    FIND(lookup_connection_value, "MHD_lookup_connection_value");
    FIND(create_response_from_buffer, "MHD_create_response_from_buffer");
    FIND(add_response_header, "MHD_add_response_header");
    FIND(queue_response, "MHD_queue_response");
    FIND(destroy_response, "MHD_destroy_response");
    loaded = 1; /* kept loaded until the process ends */
    return;
fail:
    snprintf(why, sizeof(why), "%s has no %s", HVDD_MHD_SONAME, missing);
    dlclose(h);
}

const hvdd_http_lib *
hvdd_http_lib_load(char *err, size_t errlen)
{
    pthread_once(&once, load_once);
    if (!loaded)
        snprintf(err, errlen, "%s", why);
    return loaded ? &lib : NULL;
}
