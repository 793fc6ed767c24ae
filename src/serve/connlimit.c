/*
 * connlimit.c — the bounds on the exporter's HTTP connections
 * (connlimit.h).
 *
 * Every request's deadline is the same span after its start, and starts
 * only move forward, so appending keeps both lists sorted by deadline:
 * the head is the first to expire and also the oldest, with no search.
 */
#include "serve/connlimit.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

/* A client: 4 for IPv4 (an IPv4-mapped IPv6 address too) and the four
 * address bytes, 6 and the first 8 bytes for IPv6 (the /64 a host gets:
 * one host can use every address in it), 0 for anything else. */
#define KEY_LEN 9

struct connlimit_client {
    struct connlimit_client *hnext; /* the bucket's chain */
    unsigned char key[KEY_LEN];
    unsigned n;                         /* its listed conns */
    struct connlimit_conn *head, *tail; /* them, oldest first */
};

static void client_key(const struct sockaddr *sa, unsigned char *key)
{
    static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memset(key, 0, KEY_LEN);
    if (sa && sa->sa_family == AF_INET) {
        key[0] = 4;
        memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa && sa->sa_family == AF_INET6) {
        const unsigned char *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        if (memcmp(a, v4mapped, sizeof(v4mapped)) == 0) {
            key[0] = 4;
            memcpy(key + 1, a + 12, 4);
        } else {
            key[0] = 6;
            memcpy(key + 1, a, 8);
        }
    }
}

static unsigned key_hash(const unsigned char *key)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (int i = 0; i < KEY_LEN; i++)
        h = (h ^ key[i]) * 16777619u;
    return (h ^ (h >> 16)) % CONNLIMIT_BUCKETS;
}

void connlimit_init(struct connlimit *l, unsigned max_conns, unsigned max_per_client,
                    uint64_t deadline_ns)
{
    memset(l, 0, sizeof(*l));
    l->max_conns = max_conns ? max_conns : 1;
    l->max_per_client = max_per_client ? max_per_client : 1;
    l->deadline_ns = deadline_ns;
}

static void append(struct connlimit *l, struct connlimit_conn *c)
{
    struct connlimit_client *cl = c->client;
    c->next = NULL;
    c->prev = l->tail;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
    c->cnext = NULL;
    c->cprev = cl->tail;
    if (cl->tail)
        cl->tail->cnext = c;
    else
        cl->head = c;
    cl->tail = c;
}

static void detach(struct connlimit *l, struct connlimit_conn *c)
{
    struct connlimit_client *cl = c->client;
    if (c->prev)
        c->prev->next = c->next;
    else
        l->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->tail = c->prev;
    if (c->cprev)
        c->cprev->cnext = c->cnext;
    else
        cl->head = c->cnext;
    if (c->cnext)
        c->cnext->cprev = c->cprev;
    else
        cl->tail = c->cprev;
    c->prev = c->next = c->cprev = c->cnext = NULL;
}

/* Take c out of both lists and the counts; its client goes with its last
 * conn. */
static void unlist(struct connlimit *l, struct connlimit_conn *c)
{
    struct connlimit_client *cl = c->client;
    if (!cl)
        return;
    detach(l, c);
    c->client = NULL;
    l->n--;
    if (--cl->n == 0) {
        struct connlimit_client **pp = &l->bucket[key_hash(cl->key)];
        while (*pp != cl)
            pp = &(*pp)->hnext;
        *pp = cl->hnext;
        free(cl);
        l->clients--;
    }
}

/* The one to close when a bound is passed, other than skip: the oldest
 * kept-alive conn waiting for another request (its client has had its
 * answers), else the oldest still waiting for its first request since
 * before young_from, else the oldest being answered, else the oldest that
 * just came. A conn accepted less than CONNLIMIT_GRACE_NS ago is spared
 * while others are being answered: a scraper's request is read within
 * that, and a flood of back-to-back requests from the scraper's own
 * address must not close it before (the flood's conns are then the ones
 * being answered). Past the grace, one whose request has come but is not
 * read yet (has_request) counts as being answered, after those that are. */
static struct connlimit_conn *oldest(const struct connlimit *l, struct connlimit_conn *head,
                                     bool per_client, const struct connlimit_conn *skip,
                                     uint64_t young_from)
{
    struct connlimit_conn *fresh = NULL, *busy = NULL, *young = NULL, *coming = NULL;
    for (struct connlimit_conn *c = head; c; c = per_client ? c->cnext : c->next) {
        if (c == skip)
            continue;
        if (c->answering) {
            if (!busy)
                busy = c;
        } else if (c->answered) {
            return c;
        } else if (c->deadline_ns > young_from) {
            if (!young)
                young = c;
        } else if (!fresh) {
            if (l->has_request && l->has_request(c)) {
                if (!coming)
                    coming = c;
            } else {
                fresh = c;
            }
        }
    }
    return fresh ? fresh : busy ? busy : coming ? coming : young;
}

int connlimit_add(struct connlimit *l, struct connlimit_conn *c, const struct sockaddr *sa,
                  uint64_t now, struct connlimit_conn **victim)
{
    *victim = NULL;
    unsigned char key[KEY_LEN];
    client_key(sa, key);
    unsigned h = key_hash(key);
    struct connlimit_client *cl = l->bucket[h];
    while (cl && memcmp(cl->key, key, KEY_LEN) != 0)
        cl = cl->hnext;
    if (!cl) {
        cl = calloc(1, sizeof(*cl));
        if (!cl)
            return -1;
        memcpy(cl->key, key, KEY_LEN);
        cl->hnext = l->bucket[h];
        l->bucket[h] = cl;
        l->clients++;
    }
    c->client = cl;
    c->answering = c->answered = false;
    c->deadline_ns = now + l->deadline_ns;
    append(l, c);
    cl->n++;
    l->n++;
    /* Each bound was kept before c, so one conn out is enough: one of
     * c's client brings both counts back. */
    struct connlimit_conn *v = NULL;
    uint64_t young_from = now + l->deadline_ns - (now > CONNLIMIT_GRACE_NS ? CONNLIMIT_GRACE_NS : now);
    if (cl->n > l->max_per_client)
        v = oldest(l, cl->head, true, c, young_from);
    else if (l->n > l->max_conns)
        v = oldest(l, l->head, false, c, young_from);
    if (v)
        unlist(l, v);
    *victim = v;
    return 0;
}

void connlimit_answering(struct connlimit_conn *c)
{
    c->answering = true;
}

void connlimit_answered(struct connlimit *l, struct connlimit_conn *c, uint64_t now)
{
    if (!c->client)
        return;
    detach(l, c);
    c->answering = false;
    c->answered = true;
    c->deadline_ns = now + l->deadline_ns;
    append(l, c);
}

bool connlimit_crowded(const struct connlimit *l, const struct connlimit_conn *c)
{
    return c->client && (c->client->n >= l->max_per_client || l->n >= l->max_conns);
}

struct connlimit_conn *connlimit_expired(struct connlimit *l, uint64_t now)
{
    struct connlimit_conn *c = l->head;
    if (!c || c->deadline_ns > now)
        return NULL;
    unlist(l, c);
    return c;
}

uint64_t connlimit_next_deadline(const struct connlimit *l)
{
    return l->head ? l->head->deadline_ns : 0;
}

void connlimit_remove(struct connlimit *l, struct connlimit_conn *c)
{
    unlist(l, c);
}
