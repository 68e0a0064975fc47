#include "hvd_addr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "hvd_numbers.h"

int
hvd_addr_bytes(const char *addr, unsigned char out[16], int *v4)
{
    struct in_addr a4;

    memset(out, 0, 16);
    if (inet_pton(AF_INET, addr, &a4) == 1) {
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &a4, 4);
        *v4 = 1;
        return 0;
    }
    *v4 = 0;
    return inet_pton(AF_INET6, addr, out) == 1 ? 0 : -1;
}

/* Keeps the first `bits` bits of a. */
static void
mask(unsigned char a[16], int bits)
{
    for (int i = 0; i < 16; i++) {
        int keep = bits - i * 8;
        a[i] &= keep >= 8 ? 0xff : keep <= 0 ? 0 : (0xff << (8 - keep)) & 0xff;
    }
}

int
hvd_addr_network(const char *addr, int prefix, char *out, size_t size)
{
    unsigned char a[16];
    char text[INET6_ADDRSTRLEN];
    int v4;

    if (hvd_addr_bytes(addr, a, &v4) != 0 || prefix < 0 ||
        prefix > (v4 ? 32 : 128))
        return -1;
    mask(a, v4 ? prefix + 96 : prefix);
    inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? a + 12 : a, text, sizeof(text));
    snprintf(out, size, "%s/%d", text, prefix);
    return 0;
}

int
hvd_addr_in_cidr(const char *addr, const char *cidr)
{
    char net[64];
    const char *slash = strchr(cidr, '/');
    unsigned char a[16], n[16];
    int v4a, v4n;
    long bits;

    if (slash == NULL || (size_t)(slash - cidr) >= sizeof(net))
        return 0;
    snprintf(net, sizeof(net), "%.*s", (int)(slash - cidr), cidr);
    if (hvd_parse_long(slash + 1, 0, 128, &bits) != 0 ||
        hvd_addr_bytes(addr, a, &v4a) || hvd_addr_bytes(net, n, &v4n) ||
        v4a != v4n || (v4a && bits > 32))
        return 0;
    mask(a, (int)(v4a ? bits + 96 : bits));
    mask(n, (int)(v4n ? bits + 96 : bits));
    return memcmp(a, n, 16) == 0;
}
