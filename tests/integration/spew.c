/* Test worker: writes N numbered lines to stdout and to stderr, in writes
 * that cut lines at arbitrary places, to stress hvdrun's line framing.
 * Line i of rank R is "R<R>:<i>:" followed by (i*7 % 200) letters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
put(int fd, const char *p, size_t n, unsigned *seed)
{
    while (n > 0) {
        size_t chunk = 1 + rand_r(seed) % 97;
        ssize_t w;
        if (chunk > n)
            chunk = n;
        if ((w = write(fd, p, chunk)) <= 0)
            exit(3);
        p += w;
        n -= (size_t)w;
    }
}

int
main(int argc, char **argv)
{
    const char *r = getenv("HOROVOD_RANK");
    long lines = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    unsigned seed = (unsigned)getpid();
    char buf[512];

    for (long i = 0; i < lines; i++) {
        int n = snprintf(buf, sizeof(buf), "R%s:%ld:", r ? r : "?", i);
        int pad = (int)(i * 7 % 200);
        memset(buf + n, 'a', pad);
        buf[n + pad] = '\n';
        put(1, buf, n + pad + 1, &seed);
        put(2, buf, n + pad + 1, &seed);
    }
    return 0;
}
