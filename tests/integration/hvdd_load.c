/* Load test and benchmark client: N simulated workers, all concurrent on
 * one curl multi handle, each registers with a standalone hvdd (which
 * answers once all N arrived), PUTs one key, long-poll GETs its
 * neighbour's key, checks the value, and passes a barrier.
 * usage: hvdd_load ADDR PORT N   (token from $HVDD_TOKEN)
 * Prints "N clients: T s, all N values read back equal" and exits 0, or
 * says what went wrong and exits 1. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum step { REGISTER, PUT, GET, BARRIER, DONE };

typedef struct client {
    CURL *h;
    int id;   /* registration order: pid field */
    int rank; /* from hvdd */
    enum step step;
    char body[256];
    char answer[512];
    size_t answer_len;
    struct curl_slist *hdr;
} client;

static const char *base;
static int n;

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t
collect(char *data, size_t size, size_t nmemb, void *arg)
{
    client *c = arg;
    size_t add = size * nmemb;

    if (c->answer_len + add >= sizeof(c->answer))
        add = sizeof(c->answer) - 1 - c->answer_len;
    memcpy(c->answer + c->answer_len, data, add);
    c->answer_len += add;
    c->answer[c->answer_len] = '\0';
    return size * nmemb;
}

static void
prepare(client *c)
{
    char url[512];

    curl_easy_reset(c->h);
    c->answer_len = 0;
    c->answer[0] = '\0';
    curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, c->hdr);
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 120L);
    switch (c->step) {
    case REGISTER:
        snprintf(url, sizeof(url), "%s/v1/register", base);
        snprintf(c->body, sizeof(c->body), "{\"host\":\"sim%d\",\"pid\":%d}",
                 c->id % 64, c->id);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, c->body);
        break;
    case PUT:
        snprintf(url, sizeof(url), "%s/bench/key_%d", base, c->rank);
        snprintf(c->body, sizeof(c->body), "value-of-%d", c->rank);
        curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, "PUT");
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, c->body);
        break;
    case GET:
        snprintf(url, sizeof(url), "%s/bench/key_%d?wait=60000", base,
                 (c->rank + 1) % n);
        break;
    case BARRIER:
        snprintf(url, sizeof(url), "%s/v1/barrier", base);
        snprintf(c->body, sizeof(c->body), "{\"name\":\"done\",\"rank\":%d}",
                 c->rank);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, c->body);
        break;
    case DONE:
        return;
    }
    curl_easy_setopt(c->h, CURLOPT_URL, url);
}

/* Checks a finished step; returns 0 or -1 after saying why. */
static int
finish_step(client *c, CURLcode rc)
{
    long status = 0;
    char want[64];
    const char *r;

    curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK || status != 200) {
        fprintf(stderr, "client %d step %d: %s, HTTP %ld: %s\n", c->id, c->step,
                curl_easy_strerror(rc), status, c->answer);
        return -1;
    }
    if (c->step == REGISTER) {
        if ((r = strstr(c->answer, "\"rank\":")) == NULL)
            return -1;
        c->rank = (int)strtol(r + 7, NULL, 10);
    } else if (c->step == GET) {
        snprintf(want, sizeof(want), "value-of-%d", (c->rank + 1) % n);
        if (strcmp(c->answer, want) != 0) {
            fprintf(stderr, "client %d: read '%s', want '%s'\n", c->id,
                    c->answer, want);
            return -1;
        }
    }
    c->step++;
    return 0;
}

static int
drive(CURLM *m, client *cs)
{
    int running = n, done = 0, bad = 0;
    CURLMsg *msg;
    int left;

    while (done < n && !bad) {
        curl_multi_perform(m, &running);
        while ((msg = curl_multi_info_read(m, &left)) != NULL) {
            client *c;
            if (msg->msg != CURLMSG_DONE)
                continue;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &c);
            curl_multi_remove_handle(m, c->h);
            if (finish_step(c, msg->data.result) != 0) {
                bad = 1;
                break;
            }
            if (c->step == DONE) {
                done++;
                continue;
            }
            prepare(c);
            curl_easy_setopt(c->h, CURLOPT_PRIVATE, c);
            curl_multi_add_handle(m, c->h);
        }
        curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    return bad ? -1 : 0;
}

int
main(int argc, char **argv)
{
    char url[256], auth[128];
    struct rlimit rl;
    client *cs;
    CURLM *m;
    double t0;
    int r;

    if (argc != 4 || getenv("HVDD_TOKEN") == NULL) {
        fprintf(stderr, "usage: HVDD_TOKEN=... hvdd_load ADDR PORT N\n");
        return 2;
    }
    n = (int)strtol(argv[3], NULL, 10);
    snprintf(url, sizeof(url), "http://%s:%s", argv[1], argv[2]);
    base = url;
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
             getenv("HVDD_TOKEN"));
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 64) {
        rl.rlim_cur =
            rl.rlim_max < (rlim_t)n + 64 ? rl.rlim_max : (rlim_t)n + 64;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)n + 16);
    /* Else new transfers wait for a connection still being set up, to see
     * whether it multiplexes, and held requests starve them. */
    curl_multi_setopt(m, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
    cs = calloc(n, sizeof(*cs));
    t0 = now();
    for (int i = 0; i < n; i++) {
        cs[i].id = i;
        cs[i].h = curl_easy_init();
        cs[i].hdr = curl_slist_append(NULL, auth);
        cs[i].hdr = curl_slist_append(cs[i].hdr, "Expect:");
        prepare(&cs[i]);
        curl_easy_setopt(cs[i].h, CURLOPT_PRIVATE, &cs[i]);
        curl_multi_add_handle(m, cs[i].h);
    }
    r = drive(m, cs);
    if (r == 0)
        printf("%d clients: %.3f s, all %d values read back equal\n", n,
               now() - t0, n);
    for (int i = 0; i < n; i++) {
        curl_multi_remove_handle(m, cs[i].h);
        curl_easy_cleanup(cs[i].h);
        curl_slist_free_all(cs[i].hdr);
    }
    free(cs);
    curl_multi_cleanup(m);
    curl_global_cleanup();
    return r == 0 ? 0 : 1;
}
