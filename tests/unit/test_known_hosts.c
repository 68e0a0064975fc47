/* known_hosts.c without a server: the line recorded for a new key must be
 * found again by libssh2 when it reads the file, and the ssh config's
 * StrictHostKeyChecking is read as ssh reads it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "known_hosts.h"
#include "unit.h"

static LIBSSH2_SESSION *session;
static char file[4096];

static void
setup(void)
{
    const char *dir = getenv("TMPDIR");
    int fd;

    snprintf(file, sizeof(file), "%s/test_known_hosts.XXXXXX",
             dir && dir[0] ? dir : "/tmp");
    fd = mkstemp(file);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_ptr_nonnull(session = libssh2_session_init());
}

static void
teardown(void)
{
    libssh2_session_free(session);
    unlink(file);
}

/* A key blob of n bytes, not a real key: libssh2 compares them as bytes. */
static char *
fake_key(size_t n, int seed)
{
    char *k = malloc(n);

    ck_assert_ptr_nonnull(k);
    for (size_t i = 0; i < n; i++)
        k[i] = (char)(i * 31 + (size_t)seed);
    return k;
}

static void
write_file(const char *text, size_t len)
{
    FILE *f = fopen(file, "w");

    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
}

/* Appends the entry for the key as known_hosts_check would; -1 when
 * known_hosts_entry refuses it. */
static int
record(const char *host, int port, const char *key, size_t len)
{
    char line[KH_LINE_MAX + 2], last = 0;
    FILE *f = fopen(file, "a+");
    int n;

    ck_assert_ptr_nonnull(f);
    if (fseek(f, -1, SEEK_END) == 0)
        last = (char)fgetc(f);
    n = known_hosts_entry(line, sizeof(line), last, host, port,
                          LIBSSH2_HOSTKEY_TYPE_RSA, key, len);
    if (n >= 0)
        ck_assert_uint_eq(fwrite(line, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return n;
}

/* The verdict for the key once libssh2 has read the file. */
static int
lookup(const char *host, int port, const char *key, size_t len)
{
    LIBSSH2_KNOWNHOSTS *kh = libssh2_knownhost_init(session);
    int r;

    ck_assert_ptr_nonnull(kh);
    libssh2_knownhost_readfile(kh, file, LIBSSH2_KNOWNHOST_FILE_OPENSSH);
    r = known_hosts_lookup(kh, host, port, LIBSSH2_HOSTKEY_TYPE_RSA, key, len);
    libssh2_knownhost_free(kh);
    return r;
}

START_TEST(entry_plain_and_with_port)
{
    char line[256], *k = fake_key(3, 0); /* base64 "AB8+" */

    ck_assert_int_gt(known_hosts_entry(line, sizeof(line), 0, "node1", 22,
                                       LIBSSH2_HOSTKEY_TYPE_ED25519, k, 3),
                     0);
    ck_assert_str_eq(line, "node1 ssh-ed25519 AB8+\n");
    ck_assert_int_gt(known_hosts_entry(line, sizeof(line), '\n', "fe80::1",
                                       2222, LIBSSH2_HOSTKEY_TYPE_RSA, k, 3),
                     0);
    ck_assert_str_eq(line, "[fe80::1]:2222 ssh-rsa AB8+\n");
    ck_assert_int_eq(known_hosts_entry(line, sizeof(line), 0, "node1", 22,
                                       LIBSSH2_HOSTKEY_TYPE_DSS, k, 3),
                     -1);
    ck_assert_int_eq(known_hosts_entry(line, 10, 0, "node1", 22,
                                       LIBSSH2_HOSTKEY_TYPE_RSA, k, 3),
                     -1);
    free(k);
}
END_TEST

/* Found by fuzz_known_hosts: libssh2 cannot match "[HOST]:PORT" of 255
 * characters or more, so no such entry is written; on port 22 the plain
 * name of the same host is short enough, written and found. */
START_TEST(long_bracketed_host_refused)
{
    char line[600], host[251], *k = fake_key(279, 1);

    memset(host, 'a', 250);
    host[250] = '\0';
    ck_assert_int_eq(known_hosts_entry(line, sizeof(line), 0, host, 4444,
                                       LIBSSH2_HOSTKEY_TYPE_ED25519, k, 279),
                     -1);
    ck_assert_int_gt(record(host, 22, k, 279), 0);
    ck_assert_int_eq(lookup(host, 22, k, 279), KH_MATCH);
    free(k);
}
END_TEST

START_TEST(recorded_key_is_found)
{
    char *k1 = fake_key(279, 1), *k2 = fake_key(279, 2);

    ck_assert_int_eq(lookup("node1", 22, k1, 279), KH_UNKNOWN);
    ck_assert_int_gt(record("node1", 22, k1, 279), 0);
    ck_assert_int_gt(record("node2", 2222, k2, 279), 0);
    ck_assert_int_eq(lookup("node1", 22, k1, 279), KH_MATCH);
    ck_assert_int_eq(lookup("node2", 2222, k2, 279), KH_MATCH);
    ck_assert_int_eq(lookup("node1", 22, k2, 279), KH_CHANGED);
    free(k1);
    free(k2);
}
END_TEST

/* A file whose last line has no newline: the new entry used to be glued
 * to it, and neither host was found again. */
START_TEST(record_after_unterminated_line)
{
    char *k1 = fake_key(51, 1), *k2 = fake_key(51, 2);
    char text[256];
    int n;

    n = known_hosts_entry(text, sizeof(text), 0, "node1", 22,
                          LIBSSH2_HOSTKEY_TYPE_RSA, k1, 51);
    ck_assert_int_gt(n, 0);
    write_file(text, (size_t)n - 1); /* its newline left out */
    ck_assert_int_eq(lookup("node1", 22, k1, 51), KH_MATCH);
    ck_assert_int_gt(record("node2", 22, k2, 51), 0);
    ck_assert_int_eq(lookup("node1", 22, k1, 51), KH_MATCH);
    ck_assert_int_eq(lookup("node2", 22, k2, 51), KH_MATCH);

    write_file("# last line a comment", 21);
    ck_assert_int_gt(record("node2", 22, k2, 51), 0);
    ck_assert_int_eq(lookup("node2", 22, k2, 51), KH_MATCH);
    free(k1);
    free(k2);
}
END_TEST

/* The longest entry known_hosts_entry writes is read back whole; a longer
 * one used to be written, read back cut (the host then looked changed),
 * and its rest stopped libssh2 reading the file: later hosts were
 * unknown. */
START_TEST(longest_entry_is_read_back)
{
    size_t len = 2000;
    char *k, *other = fake_key(40, 9), line[KH_LINE_MAX + 2];

    for (;; len++) {
        k = fake_key(len + 1, 1);
        int n = known_hosts_entry(line, sizeof(line), 0, "node1", 22,
                                  LIBSSH2_HOSTKEY_TYPE_RSA, k, len + 1);
        free(k);
        if (n < 0)
            break;
        ck_assert_uint_lt(len, 4000);
    }
    ck_assert_uint_gt(len, 3000);
    k = fake_key(len, 1);
    ck_assert_int_gt(record("node1", 22, k, len), KH_LINE_MAX - 4);
    ck_assert_int_gt(record("node2", 22, other, 40), 0);
    ck_assert_int_eq(lookup("node1", 22, k, len), KH_MATCH);
    ck_assert_int_eq(lookup("node2", 22, other, 40), KH_MATCH);
    free(k);
    k = fake_key(len + 1, 1);
    ck_assert_int_eq(record("node3", 22, k, len + 1), -1);
    free(k);
    free(other);
}
END_TEST

static const struct {
    const char *text;
    int accepts;
} configs[] = {
    {"StrictHostKeyChecking accept-new\n", 1},
    {"  stricthostkeychecking No\n", 1},
    {"StrictHostKeyCheckingX no\n", 0},
    {"StrictHostKeyChecking=no\n", 1},
    {"StrictHostKeyChecking = off\n", 1},
    {"StrictHostKeyChecking yes\n", 0},
    {"StrictHostKeyChecking yes\nStrictHostKeyChecking no\n", 0},
    {"Host gpu*\n  StrictHostKeyChecking no\n", 0},
    {"Host gpu*\n  User a\nHost *\n  StrictHostKeyChecking accept-new\n", 1},
    {"Match all\n  StrictHostKeyChecking no\n", 0},
    {"# StrictHostKeyChecking no\n", 0},
    {"StrictHostKeyChecking no", 1}, /* no final newline */
    {"", 0},
};

START_TEST(config_text)
{
    ck_assert_int_eq(known_hosts_config_text_accepts_new(
                         configs[_i].text, strlen(configs[_i].text)),
                     configs[_i].accepts);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("known_hosts");
    TCase *tc = tcase_create("entries");
    TCase *cfg = tcase_create("config");

    tcase_add_checked_fixture(tc, setup, teardown);
    ADD(tc, entry_plain_and_with_port);
    ADD(tc, long_bracketed_host_refused);
    ADD(tc, recorded_key_is_found);
    ADD(tc, record_after_unterminated_line);
    ADD(tc, longest_entry_is_read_back);
    suite_add_tcase(s, tc);
    tcase_add_loop_test(cfg, config_text, 0,
                        sizeof(configs) / sizeof(configs[0]));
    suite_add_tcase(s, cfg);
    return s;
}

UNIT_MAIN(suite)
