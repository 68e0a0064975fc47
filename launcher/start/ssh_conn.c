#include "ssh_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base64.h"
#include "known_hosts.h"

const char *
ssh_step_name(ssh_step s)
{
    static const char *names[] = {
#define SSH_STEP_NAME(id, name) name,
        SSH_STEPS(SSH_STEP_NAME)
#undef SSH_STEP_NAME
    };
    return names[s];
}

static int
fail(ssh_conn *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->error, sizeof(c->error), fmt, ap);
    va_end(ap);
    c->failed = 1;
    return -1;
}

/* libssh2's last error text. */
static const char *
why(ssh_conn *c)
{
    char *msg = NULL;

    libssh2_session_last_error(c->s, &msg, NULL, 0);
    return msg && msg[0] ? msg : "unknown error";
}

/* The identity files OpenSSH tries, after -i. */
static void
list_keys(ssh_conn *c)
{
    static const char *names[] = {"id_ed25519", "id_ecdsa", "id_rsa"};
    const char *home = getenv("HOME");

    c->nkeys = 0;
    if (c->t.identity_file)
        snprintf(c->keys[c->nkeys++], sizeof(c->keys[0]), "%s",
                 c->t.identity_file);
    for (size_t i = 0; home && i < 3 && c->nkeys < 4; i++) {
        snprintf(c->keys[c->nkeys], sizeof(c->keys[0]), "%s/.ssh/%s", home,
                 names[i]);
        if (access(c->keys[c->nkeys], R_OK) == 0 &&
            !(c->t.identity_file &&
              strcmp(c->keys[c->nkeys], c->t.identity_file) == 0))
            c->nkeys++;
    }
}

int
ssh_conn_start(ssh_conn *c, const ssh_target *t, const char *command)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
    char port[16];
    int e, one = 1;

    memset(c, 0, sizeof(*c));
    c->t = *t;
    c->command = command;
    c->fd = -1;
    c->step = SSH_RESOLVE;
    snprintf(port, sizeof(port), "%d", t->port);
    if ((e = getaddrinfo(t->host, port, &hints, &res)) != 0)
        return fail(c, "%s", gai_strerror(e));
    c->step = SSH_CONNECT;
    /* CLOEXEC: a worker holding this socket would hide our death from
     * the remote agent */
    c->fd =
        socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c->fd < 0 || (connect(c->fd, res->ai_addr, res->ai_addrlen) != 0 &&
                      errno != EINPROGRESS)) {
        freeaddrinfo(res);
        return fail(c, "%s", strerror(errno));
    }
    freeaddrinfo(res);
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    list_keys(c);
    return 0;
}

static int
connected(ssh_conn *c)
{
    struct pollfd p = {c->fd, POLLOUT, 0};
    struct sockaddr_storage a;
    socklen_t len = sizeof(int);
    int err = 0;

    if (poll(&p, 1, 0) != 1)
        return 0;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err)
        return fail(c, "%s", strerror(err ? err : errno));
    len = sizeof(a);
    if (getsockname(c->fd, (struct sockaddr *)&a, &len) == 0)
        getnameinfo((struct sockaddr *)&a, len, c->local_addr,
                    sizeof(c->local_addr), NULL, 0, NI_NUMERICHOST);
    if ((c->s = libssh2_session_init()) == NULL)
        return fail(c, "out of memory");
    libssh2_session_set_blocking(c->s, 0);
    libssh2_keepalive_config(c->s, 0, 15);
    c->step = SSH_HANDSHAKE;
    return 1;
}

static int
check_host_key(ssh_conn *c)
{
    char fp[80];
    int r = known_hosts_check(c->s, c->t.known_hosts, c->t.host, c->t.port,
                              c->t.accept_new, fp, sizeof(fp));

    c->step = SSH_HOSTKEY;
    switch (r) {
    case KH_MATCH:
    case KH_ADDED:
        c->step = SSH_AUTH;
        return 1;
    case KH_UNKNOWN:
        return fail(c,
                    "host key %s is not in %s; check it and add it "
                    "(ssh-keyscan), or use --ssh-accept-new",
                    fp, c->t.known_hosts);
    case KH_CHANGED:
        return fail(c,
                    "HOST KEY CHANGED: the host now shows %s, which %s "
                    "does not list for it; refusing (possible "
                    "man-in-the-middle, or the host was reinstalled)",
                    fp, c->t.known_hosts);
    }
    return fail(c, "cannot check host key %s against %s", fp, c->t.known_hosts);
}

/* The key blob of a .pub file (its second field), or "". */
static void
pub_blob(const char *key_file, char *out, size_t size)
{
    char path[1100], line[8192];
    FILE *f;

    out[0] = '\0';
    snprintf(path, sizeof(path), "%s.pub", key_file);
    if ((f = fopen(path, "re")) == NULL)
        return;
    if (fgets(line, sizeof(line), f) && sscanf(line, "%*s %8191s", line) == 1)
        snprintf(out, size, "%s", line);
    fclose(f);
}

/* The agent's identities, the one matching -i's public key first: sshd
 * allows few attempts (MaxAuthTries 6), and an agent may hold many. */
static int
agent_identities(ssh_conn *c)
{
    struct libssh2_agent_publickey *id = NULL;
    char want[8192] = "", have[8192];
    int first = 0;

    if ((c->agent = libssh2_agent_init(c->s)) == NULL ||
        libssh2_agent_connect(c->agent) != 0 ||
        libssh2_agent_list_identities(c->agent) != 0)
        return -1;
    if (c->t.identity_file)
        pub_blob(c->t.identity_file, want, sizeof(want));
    while (c->nids < 16 && libssh2_agent_get_identity(c->agent, &id, id) == 0) {
        c->ids[c->nids] = id;
        base64_encode(id->blob, id->blob_len, have, sizeof(have), 1);
        if (want[0] && strcmp(want, have) == 0 && c->nids > first) {
            c->ids[c->nids] = c->ids[first];
            c->ids[first++] = id;
        }
        c->nids++;
    }
    return 0;
}

/* ssh-agent's identities first, then the key files. Returns 1 when
 * authenticated, 0 on EAGAIN, -1 when every way failed. */
static int
authenticate(ssh_conn *c)
{
    int r;

    if (!c->agent_done && c->agent == NULL && getenv("SSH_AUTH_SOCK") &&
        agent_identities(c) != 0)
        c->agent_done = 1;
    while (!c->agent_done && c->id < c->nids) {
        r = libssh2_agent_userauth(c->agent, c->t.user, c->ids[c->id]);
        if (r == LIBSSH2_ERROR_EAGAIN)
            return 0;
        if (r == 0)
            return 1;
        c->id++;
    }
    c->agent_done = 1;
    while (c->key < c->nkeys) {
        r = libssh2_userauth_publickey_fromfile_ex(c->s, c->t.user,
                                                   (unsigned)strlen(c->t.user),
                                                   NULL, c->keys[c->key], NULL);
        if (r == LIBSSH2_ERROR_EAGAIN)
            return 0;
        if (r == 0)
            return 1;
        if (strstr(c->keys[c->key], "rsa"))
            c->rsa_refused = 1;
        c->key++;
    }
    if (c->nkeys == 0 && c->nids == 0)
        return fail(c, "no ssh-agent key and no key in ~/.ssh for %s",
                    c->t.user);
    return fail(c, "%s@%s refused every key (%d from ssh-agent, %d file%s)%s",
                c->t.user, c->t.host, c->nids, c->nkeys,
                c->nkeys == 1 ? "" : "s",
                c->rsa_refused ? "; RSA keys do not work with this "
                                 "library: use an Ed25519 or ECDSA key"
                               : "");
}

static int
start_exec(ssh_conn *c)
{
    int r;

    if (c->ch == NULL && (c->ch = libssh2_channel_open_session(c->s)) == NULL) {
        if (libssh2_session_last_errno(c->s) == LIBSSH2_ERROR_EAGAIN)
            return 0;
        return fail(c, "cannot open a channel: %s", why(c));
    }
    r = libssh2_channel_exec(c->ch, c->command);
    if (r == LIBSSH2_ERROR_EAGAIN)
        return 0;
    if (r != 0)
        return fail(c, "%s", why(c));
    c->step = SSH_OPEN;
    return 1;
}

int
ssh_conn_advance(ssh_conn *c)
{
    int r;

    if (c->failed)
        return -1;
    for (;;) {
        switch (c->step) {
        case SSH_RESOLVE:
        case SSH_CONNECT:
            if ((r = connected(c)) <= 0)
                return r;
            break;
        case SSH_HANDSHAKE:
            r = libssh2_session_handshake(c->s, c->fd);
            if (r == LIBSSH2_ERROR_EAGAIN)
                return 0;
            if (r != 0)
                return fail(c, "%s", why(c));
            if (check_host_key(c) < 0)
                return -1;
            break;
        case SSH_HOSTKEY:
        case SSH_AUTH:
            if ((r = authenticate(c)) <= 0)
                return r;
            c->step = SSH_EXEC;
            break;
        case SSH_EXEC:
            if ((r = start_exec(c)) <= 0)
                return r;
            break;
        default:
            return 1;
        }
    }
}

short
ssh_conn_events(const ssh_conn *c)
{
    int d;

    if (c->step <= SSH_CONNECT)
        return POLLOUT;
    d = c->s ? libssh2_session_block_directions(c->s) : 0;
    return (short)(POLLIN | (d & LIBSSH2_SESSION_BLOCK_OUTBOUND ? POLLOUT : 0));
}

ssize_t
ssh_conn_read(ssh_conn *c, int stream, char *buf, size_t n)
{
    ssize_t r = libssh2_channel_read_ex(c->ch, stream, buf, n);

    if (r == 0 && !libssh2_channel_eof(c->ch))
        return LIBSSH2_ERROR_EAGAIN;
    return r;
}

int
ssh_conn_buffered(const ssh_conn *c)
{
    /* (poll_channel_read with 1: data of either stream) */
    return c->step == SSH_OPEN &&
           (libssh2_poll_channel_read(c->ch, 1) || libssh2_channel_eof(c->ch));
}

ssize_t
ssh_conn_write(ssh_conn *c, const char *buf, size_t n)
{
    return libssh2_channel_write(c->ch, buf, n);
}

static const struct {
    const char *name;
    int num;
} signals[] = {{"HUP", 1},   {"INT", 2},   {"QUIT", 3}, {"ILL", 4},
               {"ABRT", 6},  {"FPE", 8},   {"KILL", 9}, {"SEGV", 11},
               {"PIPE", 13}, {"ALRM", 14}, {"TERM", 15}};

int
ssh_conn_finish(ssh_conn *c)
{
    char *sig = NULL;
    int r;

    c->step = SSH_CLOSING;
    r = libssh2_channel_wait_closed(c->ch);
    if (r == LIBSSH2_ERROR_EAGAIN)
        return 0;
    c->step = SSH_CLOSED;
    c->exit_code = libssh2_channel_get_exit_status(c->ch);
    libssh2_channel_get_exit_signal(c->ch, &sig, NULL, NULL, NULL, NULL, NULL);
    if (sig) {
        c->exit_code = 128 + 15;
        for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
            if (strcmp(sig, signals[i].name) == 0)
                c->exit_code = 128 + signals[i].num;
        libssh2_free(c->s, sig);
    }
    return r == 0 ? 1 : -1;
}

void
ssh_conn_release(ssh_conn *c)
{
    /* session_free without closing the channel first: closing would block
     * until the remote command exits */
    if (c->agent) {
        libssh2_agent_disconnect(c->agent);
        libssh2_agent_free(c->agent);
    }
    if (c->s) {
        /* non-blocking, free may answer EAGAIN and free nothing; blocking
         * with a bound, it returns at once in practice */
        libssh2_session_set_blocking(c->s, 1);
        libssh2_session_set_timeout(c->s, 2000);
        libssh2_session_disconnect(c->s, "job over");
        libssh2_session_free(c->s);
    }
    if (c->fd >= 0)
        close(c->fd);
    c->s = NULL;
    c->ch = NULL;
    c->agent = NULL;
    c->fd = -1;
}
