/* The exporter's connection bounds (src/serve/connlimit.c): deadlines from the
 * accept and from the answer before, the per-client and total bounds and
 * which connection each closes, clients by IPv4 address and IPv6 /64. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "serve/connlimit.h"

#define D 10000u /* the deadline, ns */

static struct sockaddr_storage addr(const char *s)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    if (strchr(s, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        assert_int_equal(inet_pton(AF_INET6, s, &a->sin6_addr), 1);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        assert_int_equal(inet_pton(AF_INET, s, &a->sin_addr), 1);
    }
    return ss;
}

/* Add c from address s at now; returns the victim. */
static struct connlimit_conn *add(struct connlimit *l, struct connlimit_conn *c, const char *s,
                                  uint64_t now)
{
    struct sockaddr_storage ss = addr(s);
    struct connlimit_conn *v = (struct connlimit_conn *)1;
    assert_int_equal(connlimit_add(l, c, (struct sockaddr *)&ss, now, &v), 0);
    return v;
}

static void test_deadlines(void **state)
{
    (void)state;
    struct connlimit l;
    struct connlimit_conn c[3];
    connlimit_init(&l, 16, 16, D);
    assert_int_equal(connlimit_next_deadline(&l), 0);
    assert_null(add(&l, &c[0], "10.0.0.1", 100));
    assert_null(add(&l, &c[1], "10.0.0.2", 200));
    assert_null(add(&l, &c[2], "10.0.0.1", 300));
    assert_int_equal(connlimit_next_deadline(&l), 100 + D);
    assert_null(connlimit_expired(&l, 100 + D - 1));
    /* answering keeps the deadline: the whole request counts */
    connlimit_answering(&c[0]);
    assert_ptr_equal(connlimit_expired(&l, 100 + D), &c[0]);
    assert_null(connlimit_expired(&l, 100 + D));
    assert_null(c[0].client);
    /* an answer gives a kept-alive conn a new deadline from then */
    connlimit_answering(&c[1]);
    connlimit_answered(&l, &c[1], 5000);
    assert_int_equal(connlimit_next_deadline(&l), 300 + D);
    assert_ptr_equal(connlimit_expired(&l, 6000 + D), &c[2]);
    assert_int_equal(connlimit_next_deadline(&l), 5000 + D);
    assert_ptr_equal(connlimit_expired(&l, 6000 + D), &c[1]);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.clients, 0);
    /* removing what was already unlisted is nothing */
    connlimit_remove(&l, &c[1]);
    assert_int_equal(l.n, 0);
}

static void test_per_client(void **state)
{
    (void)state;
    struct connlimit l;
    struct connlimit_conn c[6];
    connlimit_init(&l, 100, 3, D);
    assert_null(add(&l, &c[0], "192.0.2.7", 1));
    assert_null(add(&l, &c[1], "192.0.2.7", 2));
    assert_null(add(&l, &c[2], "192.0.2.7", 3));
    assert_null(add(&l, &c[5], "192.0.2.8", 3)); /* another client: its own bound */
    /* over the bound: the client's oldest waiting for its first request
     * (past the grace) */
    const uint64_t G = CONNLIMIT_GRACE_NS;
    connlimit_answering(&c[0]);
    assert_ptr_equal(add(&l, &c[3], "192.0.2.7", 4 + G), &c[1]);
    assert_null(c[1].client);
    /* ... but a kept-alive one waiting for another request goes first */
    connlimit_answered(&l, &c[0], 5 + G);
    assert_ptr_equal(add(&l, &c[4], "192.0.2.7", 6 + G), &c[0]);
    /* every other one being answered: the oldest (never the new one) */
    connlimit_answering(&c[2]);
    connlimit_answering(&c[3]);
    connlimit_answering(&c[4]);
    assert_ptr_equal(add(&l, &c[1], "192.0.2.7", 7 + G), &c[2]);
    assert_int_equal(l.n, 4);
    assert_int_equal(l.clients, 2);
    connlimit_remove(&l, &c[1]);
    connlimit_remove(&l, &c[3]);
    connlimit_remove(&l, &c[4]);
    connlimit_remove(&l, &c[5]);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.clients, 0);
    assert_null(l.head);
    assert_null(l.tail);
}

/* A scraper's connection that has just come is not closed for a flood
 * from its own address while a flood connection is being answered; past
 * the grace it is a waiting connection like any other. */
static void test_grace_for_a_new_connection(void **state)
{
    (void)state;
    struct connlimit l;
    struct connlimit_conn c[4];
    const uint64_t G = CONNLIMIT_GRACE_NS, T = 10 * G;
    connlimit_init(&l, 100, 2, D);
    assert_null(add(&l, &c[0], "127.0.0.1", T)); /* the flood's, being answered */
    connlimit_answering(&c[0]);
    assert_null(add(&l, &c[1], "127.0.0.1", T + 1)); /* the scraper's */
    /* 1 ms later the flood reconnects: its busy conn goes, not the scraper */
    assert_ptr_equal(add(&l, &c[2], "127.0.0.1", T + 1000000), &c[0]);
    assert_non_null(c[1].client);
    /* the new flood conn is answered; after the grace the scraper (which
     * never sent its request) is the one to go */
    connlimit_answering(&c[2]);
    assert_ptr_equal(add(&l, &c[3], "127.0.0.1", T + 1 + G), &c[1]);
    /* only conns that just came: the oldest of them goes (never the new one) */
    connlimit_remove(&l, &c[2]);
    connlimit_remove(&l, &c[3]);
    assert_null(add(&l, &c[0], "127.0.0.1", T + 2 * G));
    assert_null(add(&l, &c[1], "127.0.0.1", T + 2 * G + 1));
    assert_ptr_equal(add(&l, &c[2], "127.0.0.1", T + 2 * G + 2), &c[0]);
    connlimit_remove(&l, &c[1]);
    connlimit_remove(&l, &c[2]);
    assert_int_equal(l.n, 0);
}

/* Past the grace, a conn whose request has come but is not read yet (the
 * server busy answering a flood from the same address) is spared while
 * others are being answered; one that sent nothing is not. */
static struct connlimit_conn *with_request;
static bool has_request_stub(struct connlimit_conn *c)
{
    return c == with_request;
}

static void test_request_come_past_the_grace(void **state)
{
    (void)state;
    struct connlimit l;
    struct connlimit_conn c[5];
    const uint64_t G = CONNLIMIT_GRACE_NS, T = 10 * G;
    connlimit_init(&l, 100, 3, D);
    l.has_request = has_request_stub;
    assert_null(add(&l, &c[0], "127.0.0.1", T)); /* the flood's, being answered */
    connlimit_answering(&c[0]);
    assert_null(add(&l, &c[1], "127.0.0.1", T + 1)); /* the scraper's: its request is in */
    assert_null(add(&l, &c[2], "127.0.0.1", T + 2)); /* sent nothing */
    with_request = &c[1];
    /* 2 grace periods later: the silent one goes first... */
    assert_ptr_equal(add(&l, &c[3], "127.0.0.1", T + 2 * G), &c[2]);
    /* ...then the one being answered, not the scraper whose request came */
    assert_ptr_equal(add(&l, &c[4], "127.0.0.1", T + 2 * G + 1), &c[0]);
    assert_non_null(c[1].client);
    /* without the peek, the scraper would have gone before the busy one */
    l.has_request = NULL;
    connlimit_answering(&c[3]);
    assert_ptr_equal(add(&l, &c[0], "127.0.0.1", T + 3 * G), &c[1]);
    with_request = NULL;
    for (int i = 0; i < 5; i++)
        if (c[i].client)
            connlimit_remove(&l, &c[i]);
    assert_int_equal(l.n, 0);
}

static void test_total(void **state)
{
    (void)state;
    struct connlimit l;
    struct connlimit_conn c[5];
    connlimit_init(&l, 3, 3, D);
    assert_null(add(&l, &c[0], "10.0.0.1", 1));
    assert_null(add(&l, &c[1], "10.0.0.2", 2));
    assert_null(add(&l, &c[2], "10.0.0.3", 3));
    connlimit_answering(&c[0]);
    /* the oldest unfinished of any client, the new one's client's or not
     * (each past the grace of a new connection) */
    const uint64_t G = CONNLIMIT_GRACE_NS;
    assert_ptr_equal(add(&l, &c[3], "10.0.0.4", 4 + G), &c[1]);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.clients, 3);
    assert_ptr_equal(add(&l, &c[4], "10.0.0.4", 5 + G), &c[2]);
    assert_ptr_equal(add(&l, &c[1], "10.0.0.5", 6 + 3 * G), &c[3]);
    assert_int_equal(l.n, 3);
    connlimit_remove(&l, &c[0]);
    connlimit_remove(&l, &c[1]);
    connlimit_remove(&l, &c[4]);
    assert_int_equal(l.clients, 0);
}

/* IPv6: one /64 is one client; an IPv4-mapped address is its IPv4 one. */
static void test_client_keys(void **state)
{
    (void)state;
    struct connlimit l;
    struct connlimit_conn c[5];
    connlimit_init(&l, 100, 2, D);
    assert_null(add(&l, &c[0], "2001:db8::1", 1));
    assert_null(add(&l, &c[1], "2001:db8::ffff:2", 2));
    assert_null(add(&l, &c[2], "2001:db8:0:1::1", 3));
    assert_int_equal(l.clients, 2);
    assert_ptr_equal(add(&l, &c[3], "2001:db8::3", 4), &c[0]);
    assert_null(add(&l, &c[0], "10.1.2.3", 5));
    assert_ptr_equal(add(&l, &c[4], "::ffff:10.1.2.3", 6), NULL);
    assert_int_equal(l.clients, 3);
    struct connlimit_conn x;
    assert_ptr_equal(add(&l, &x, "10.1.2.3", 7), &c[0]);
    /* no address (or another family): one client for all of them */
    struct connlimit_conn y, z;
    struct connlimit_conn *v = NULL;
    assert_int_equal(connlimit_add(&l, &y, NULL, 8, &v), 0);
    assert_null(v);
    assert_int_equal(l.clients, 4);
    assert_int_equal(connlimit_add(&l, &z, NULL, 9, &v), 0);
    assert_int_equal(l.clients, 4);
    struct connlimit_conn *left[] = {&c[1], &c[2], &c[3], &c[4], &x, &y, &z};
    for (size_t i = 0; i < sizeof(left) / sizeof(left[0]); i++)
        connlimit_remove(&l, left[i]);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.clients, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadlines),
        cmocka_unit_test(test_per_client),
        cmocka_unit_test(test_total),
        cmocka_unit_test(test_grace_for_a_new_connection),
        cmocka_unit_test(test_request_come_past_the_grace),
        cmocka_unit_test(test_client_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
