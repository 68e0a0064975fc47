#include "local_host.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hvd_addr.h"

/* The numeric address of an ifaddrs entry, or "" for other families. */
static void
numeric(const struct ifaddrs *i, char *buf, size_t size)
{
    buf[0] = '\0';
    if (i->ifa_addr == NULL || (i->ifa_addr->sa_family != AF_INET &&
                                i->ifa_addr->sa_family != AF_INET6))
        return;
    if (getnameinfo(i->ifa_addr,
                    i->ifa_addr->sa_family == AF_INET
                        ? sizeof(struct sockaddr_in)
                        : sizeof(struct sockaddr_in6),
                    buf, size, NULL, 0, NI_NUMERICHOST) != 0)
        buf[0] = '\0';
}

static int
is_interface_address(const char *name)
{
    struct ifaddrs *ifs, *i;
    char buf[INET6_ADDRSTRLEN + 8];
    int found = 0;

    if (getifaddrs(&ifs) != 0)
        return 0;
    for (i = ifs; i && !found; i = i->ifa_next) {
        numeric(i, buf, sizeof(buf));
        found = buf[0] && strcmp(buf, name) == 0;
    }
    freeifaddrs(ifs);
    return found;
}

static int
is_own_name(const char *name)
{
    char host[256];
    char *dot;

    if (gethostname(host, sizeof(host)) != 0)
        return 0;
    host[sizeof(host) - 1] = '\0';
    if (strcmp(host, name) == 0)
        return 1;
    if ((dot = strchr(host, '.')) != NULL) {
        *dot = '\0';
        return strcmp(host, name) == 0;
    }
    return 0;
}

int
host_is_local(const char *name)
{
    if (strcmp(name, "localhost") == 0 || strcmp(name, "::1") == 0 ||
        strncmp(name, "127.", 4) == 0)
        return 1;
    return is_own_name(name) || is_interface_address(name);
}

int
free_local_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;

    if (fd < 0)
        return 0;
    /* every address: MASTER_ADDR need not be loopback */
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* One entry: an interface name, or a CIDR. Returns 1 when found. */
static int
match_entry(struct ifaddrs *ifs, const char *entry, char *iface, size_t ifsize,
            char *addr, size_t addrsize)
{
    char buf[INET6_ADDRSTRLEN + 8];
    int found = 0;

    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        numeric(i, buf, sizeof(buf));
        if (buf[0] == '\0' || !(i->ifa_flags & IFF_UP))
            continue;
        if (strchr(entry, '/') ? !hvd_addr_in_cidr(buf, entry)
                               : strcmp(i->ifa_name, entry) != 0)
            continue;
        /* IPv4 first: what Gloo and MASTER_ADDR users expect */
        if (!found || (strchr(addr, ':') && !strchr(buf, ':'))) {
            snprintf(iface, ifsize, "%s", i->ifa_name);
            snprintf(addr, addrsize, "%s", buf);
        }
        found = 1;
    }
    return found;
}

int
local_interface(const char *wanted, char *iface, size_t ifsize, char *addr,
                size_t addrsize)
{
    struct ifaddrs *ifs;
    char list[512], *entry, *save = NULL;
    int found = 0;

    if (getifaddrs(&ifs) != 0)
        return -1;
    snprintf(list, sizeof(list), "%s", wanted);
    for (entry = strtok_r(list, ",", &save); entry && !found;
         entry = strtok_r(NULL, ",", &save))
        found = match_entry(ifs, entry, iface, ifsize, addr, addrsize);
    freeifaddrs(ifs);
    return found ? 0 : -1;
}
