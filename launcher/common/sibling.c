#include "sibling.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
sibling_path(const char *name, char *out, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    char *slash;
    int len;

    if (n <= 0)
        return -1;
    self[n] = '\0';
    if ((slash = strrchr(self, '/')) == NULL)
        return -1;
    *slash = '\0';
    len = snprintf(out, size, "%s/%s", self, name);
    return len < 0 || (size_t)len >= size ? -1 : 0;
}
