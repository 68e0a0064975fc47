/* srun_auth.c, the handshake between hvdrun and an agent that srun
 * started: a round trip, its MACs checked against OpenSSL's HMAC-SHA256
 * over the message srun_auth.h documents (a second implementation, so
 * that a change of crypto library cannot change the wire), and every
 * way an answer can be wrong refused. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

#include "srun_auth.h"
#include "unit.h"

#define SECRET "0f1e2d3c4b5a69788796a5b4c3d2e1f0secret"
#define WHERE "10.1.2.3 40000"

/* The hex HMAC-SHA256 of srun_auth.h's message, by OpenSSL. */
static void
reference_mac(const char *secret, char role, const char *node, int stream,
              const char *where, const char *snonce, const char *cnonce,
              char out[65])
{
    char msg[SRUN_AUTH_LINE];
    unsigned char md[32];
    unsigned int len = 0;
    int n = snprintf(msg, sizeof(msg), "hvdrun-srun-1\n%c\n%s\n%d\n%s\n%s\n%s",
                     role, node, stream, where, snonce, cnonce);

    ck_assert_ptr_nonnull(HMAC(EVP_sha256(), secret, (int)strlen(secret),
                               (const unsigned char *)msg, (size_t)n, md,
                               &len));
    ck_assert_uint_eq(len, 32);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* One handshake's lines: hvdrun's nonce and hello, the agent's answer
 * and the proof it expects back. */
typedef struct exchange {
    char nonce[SRUN_AUTH_NONCE], hello[SRUN_AUTH_LINE];
    char answer[SRUN_AUTH_LINE], expect[65];
} exchange;

static void
start(exchange *x, const char *node, int stream)
{
    ck_assert_int_eq(srun_auth_hello(x->nonce, x->hello, sizeof(x->hello)), 0);
    ck_assert_int_eq(srun_auth_answer(SECRET, x->hello, node, stream, WHERE,
                                      x->answer, sizeof(x->answer), x->expect),
                     0);
}

static int
check(const exchange *x, const char *secret, const char *where,
      const char *answer)
{
    char node[256], proof[SRUN_AUTH_LINE];
    int stream;

    return srun_auth_check(secret, x->nonce, where, answer, node, sizeof(node),
                           &stream, proof, sizeof(proof));
}

START_TEST(round_trip)
{
    exchange x;
    char node[256], proof[SRUN_AUTH_LINE], want[SRUN_AUTH_LINE];
    int stream = -1;

    start(&x, "node07", 2);
    ck_assert_int_eq(srun_auth_check(SECRET, x.nonce, WHERE, x.answer, node,
                                     sizeof(node), &stream, proof,
                                     sizeof(proof)),
                     0);
    ck_assert_str_eq(node, "node07");
    ck_assert_int_eq(stream, 2);
    snprintf(want, sizeof(want), "%s\n", x.expect);
    ck_assert_str_eq(proof, want);
}
END_TEST

START_TEST(macs_are_hmac_sha256_of_the_documented_message)
{
    exchange x;
    char node[64], cnonce[SRUN_AUTH_NONCE], mac_a[65], want[65];
    int stream;

    start(&x, "rack0_blade3", 1);
    ck_assert_int_eq(
        sscanf(x.answer, "%63s %d %32s %64s", node, &stream, cnonce, mac_a), 4);
    ck_assert_str_eq(node, "rack0_blade3");
    ck_assert_int_eq(stream, 1);
    reference_mac(SECRET, 'a', node, 1, WHERE, x.nonce, cnonce, want);
    ck_assert_str_eq(mac_a, want);
    reference_mac(SECRET, 'h', node, 1, WHERE, x.nonce, cnonce, want);
    ck_assert_str_eq(x.expect, want);
}
END_TEST

START_TEST(nonces_are_fresh_lowercase_hex)
{
    char a[SRUN_AUTH_NONCE], b[SRUN_AUTH_NONCE], line[SRUN_AUTH_LINE];

    ck_assert_int_eq(srun_auth_hello(a, line, sizeof(line)), 0);
    ck_assert_int_eq(srun_auth_hello(b, line, sizeof(line)), 0);
    ck_assert_uint_eq(strlen(a), 32);
    ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 32);
    ck_assert_str_ne(a, b);
    ck_assert_int_eq(strncmp(line, "HVDS1 ", 6), 0);
    ck_assert_str_eq(line + 6 + 32, "\n");
}
END_TEST

START_TEST(wrong_secret_or_place_is_refused)
{
    exchange x;

    start(&x, "n1", 0);
    ck_assert_int_eq(check(&x, SECRET "x", WHERE, x.answer), -1);
    ck_assert_int_eq(check(&x, SECRET, "10.1.2.3 40001", x.answer), -1);
    ck_assert_int_eq(check(&x, SECRET, WHERE, x.answer), 0);
}
END_TEST

START_TEST(tampered_answers_are_refused)
{
    exchange x;
    char bad[SRUN_AUTH_LINE];
    size_t n;

    start(&x, "n1", 0);
    n = strlen(x.answer); /* "n1 0 CNONCE MAC\n" */
    snprintf(bad, sizeof(bad), "%s", x.answer);
    bad[n - 2] = bad[n - 2] == '0' ? '1' : '0'; /* the MAC's last digit */
    ck_assert_int_eq(check(&x, SECRET, WHERE, bad), -1);
    snprintf(bad, sizeof(bad), "%s", x.answer);
    bad[0] = 'm'; /* another node */
    ck_assert_int_eq(check(&x, SECRET, WHERE, bad), -1);
    snprintf(bad, sizeof(bad), "%s", x.answer);
    bad[3] = '1'; /* another stream */
    ck_assert_int_eq(check(&x, SECRET, WHERE, bad), -1);
    ck_assert_int_eq(check(&x, SECRET, WHERE, "n1 0 short ff\n"), -1);
    ck_assert_int_eq(check(&x, SECRET, WHERE, ""), -1);
}
END_TEST

START_TEST(malformed_hellos_and_streams_are_refused)
{
    char nonce[SRUN_AUTH_NONCE], hello[SRUN_AUTH_LINE];
    char answer[SRUN_AUTH_LINE], expect[65];

    ck_assert_int_eq(srun_auth_hello(nonce, hello, sizeof(hello)), 0);
    ck_assert_int_eq(srun_auth_answer(SECRET, "HVDS1 0123\n", "n1", 0, WHERE,
                                      answer, sizeof(answer), expect),
                     -1);
    ck_assert_int_eq(
        srun_auth_answer(SECRET, "HVDS1 0123456789ABCDEF0123456789abcdef\n",
                         "n1", 0, WHERE, answer, sizeof(answer), expect),
        -1);
    ck_assert_int_eq(srun_auth_answer(SECRET, "HELLO\n", "n1", 0, WHERE, answer,
                                      sizeof(answer), expect),
                     -1);
    {
        exchange x;
        start(&x, "n1", 0);
        snprintf(answer, sizeof(answer), "n1 3%s", strchr(x.answer, ' ') + 2);
        ck_assert_int_eq(check(&x, SECRET, WHERE, answer), -1);
    }
}
END_TEST

START_TEST(equal_compares_whole_strings)
{
    ck_assert_int_eq(srun_auth_equal("abcd", "abcd"), 1);
    ck_assert_int_eq(srun_auth_equal("abcd", "abce"), 0);
    ck_assert_int_eq(srun_auth_equal("abcd", "abc"), 0);
    ck_assert_int_eq(srun_auth_equal("", ""), 1);
}
END_TEST

static Suite *
suite(void)
{
    Suite *s = suite_create("srun_auth");
    TCase *tc = tcase_create("core");

    ADD(tc, round_trip);
    ADD(tc, macs_are_hmac_sha256_of_the_documented_message);
    ADD(tc, nonces_are_fresh_lowercase_hex);
    ADD(tc, wrong_secret_or_place_is_refused);
    ADD(tc, tampered_answers_are_refused);
    ADD(tc, malformed_hellos_and_streams_are_refused);
    ADD(tc, equal_compares_whole_strings);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
