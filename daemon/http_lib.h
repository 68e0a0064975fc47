/* libmicrohttpd's functions that hvdd calls, loaded when it first needs
 * them rather than when hvdd starts. Debian's libmicrohttpd is built for
 * HTTPS, which hvdd never serves, and brings gnutls and the eight
 * libraries gnutls needs: their relocations and constructors were 1.2 of
 * the 1.7 ms of CPU of hvdd's start (perf stat -r 200 of hvdd --help:
 * 1.69 ms linked, 0.49 loading it later). In a job hvdrun started, only
 * the workers speak HTTP to hvdd (hvdrun and its agents use the
 * channel), later or never (a job of `true`), so an hvdd given its
 * listening socket (--listen-fd) loads the library at the first HTTP
 * caller; any other, at its start. Private to daemon/. */
#ifndef HVDD_HTTP_LIB_H
#define HVDD_HTTP_LIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

/* Each function by its own type, as microhttpd.h declares it. */
typedef struct hvdd_http_lib {
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
    __typeof__(MHD_add_connection) *add_connection;
    __typeof__(MHD_suspend_connection) *suspend_connection;
    __typeof__(MHD_resume_connection) *resume_connection;
    __typeof__(MHD_http_unescape) *http_unescape;
    __typeof__(MHD_get_connection_info) *get_connection_info;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_destroy_response) *destroy_response;
} hvdd_http_lib;

/* The library, loaded on the first call (any thread; later calls return
 * the same), or NULL with err naming the library and why. */
const hvdd_http_lib *hvdd_http_lib_load(char *err, size_t errlen);

#endif
