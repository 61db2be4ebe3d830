/* The microbenchmark's closed loop as a native event loop: the reference of `netlock bench`
 * (sim/native/reference.py compiles it with the machine's C compiler).
 *
 * The model of sim/baseline.py, with the fast engine's network: each client picks a lock
 * uniformly, its acquire reaches the lock manager one hop later, waits in the lock's FIFO
 * queue (exclusive, one holder), the grant reaches the client one hop later, the client
 * releases at once (no think time) and sends its next acquire with the release (one packet,
 * one hop); the release frees the lock and grants the next waiter. A hop takes half the
 * round trip plus normal noise of standard deviation JITTER_US, clipped at zero; each client
 * has a FIFO link each way (a packet never arrives before the one sent ahead of it on its
 * link). Three events per request (acquire arrival, grant arrival, release arrival; the
 * acquire that rides with a release is scheduled at the release's arrival). No leases, loss,
 * switch or recording. With JITTER_US = 0 it is the plain simpy model exactly.
 *
 * QUEUE picks the event queue; both order events by (time, sequence) and so give identical
 * results:
 *   heap      a binary min-heap of events (every operation sifts through about log2 n levels);
 *   calendar  a calendar queue (R. Brown, CACM 31(10), 1988): a ring of buckets of width W,
 *             each a list sorted by (time, sequence); an event goes to bucket floor(t / W)
 *             mod the ring's size and a pop takes the head of the current bucket when it
 *             belongs to the current lap. The ring has about four buckets per client
 *             (each client has at most one pending event) and spans a hop's delay (half
 *             the round trip plus four jitter deviations), so a bucket holds about a quarter
 *             of an event and push and pop cost O(1) (of the ring sizes and widths tried,
 *             1-32 buckets a client, this was the fastest: 2.3x the heap on 120 clients).
 *             With constant delays (JITTER_US = 0) the events of a round trip share few
 *             buckets and the heap is faster.
 *
 * Usage: closed_loop CLIENTS LOCKS RTT_US JITTER_US DURATION_US SEED heap|calendar
 * Prints: granted-requests events loop-cpu-seconds latency-sum-us grant-checksum
 * (the checksum hashes each grant's client and arrival time, in order).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ACQUIRE = 0, GRANT = 1, RELEASE = 2 };

/* --- randomness: splitmix64 streams; normals by Marsaglia's polar method --------------- */

typedef struct { uint64_t s; } Rng;

static inline uint64_t next_random(Rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static Rng lock_rng, delay_rng;
static double spare_normal;
static int has_spare;

static inline double next_normal(void) {
    if (has_spare) {
        has_spare = 0;
        return spare_normal;
    }
    double u, v, s;
    do {
        u = (double)(next_random(&delay_rng) >> 11) * 0x1.0p-52 - 1.0;
        v = (double)(next_random(&delay_rng) >> 11) * 0x1.0p-52 - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double f = sqrt(-2.0 * log(s) / s);
    spare_normal = v * f;
    has_spare = 1;
    return u * f;
}

/* --- the model's state -------------------------------------------------------------------- */

static double half_rtt, jitter;
static int32_t *lock_of, *next_waiter, *holder, *tail;
static double *up_last, *down_last, *sent_at;

static inline double hop(void) {
    if (jitter <= 0.0) return half_rtt;
    double d = half_rtt + jitter * next_normal();
    return d > 0.0 ? d : 0.0;
}

static inline double fifo(double *last, double t) {
    if (t < *last) return *last;
    *last = t;
    return t;
}

/* --- queue 1: binary heap ------------------------------------------------------------------ */

typedef struct {
    double t;
    uint64_t seq;
    int32_t kind;
    int32_t client;
} Event;

static Event *heap;
static size_t heap_size;
static uint64_t next_seq;

static inline int before(double t1, uint64_t q1, double t2, uint64_t q2) {
    return t1 < t2 || (t1 == t2 && q1 < q2);
}

static inline void heap_push(double t, int kind, int client) {
    Event e = {t, next_seq++, kind, client};
    size_t i = heap_size++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (before(heap[parent].t, heap[parent].seq, e.t, e.seq)) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = e;
}

static inline int heap_empty(void) { return heap_size == 0; }
static inline double heap_first_t(void) { return heap[0].t; }

static inline Event heap_pop(void) {
    Event top = heap[0];
    Event last = heap[--heap_size];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= heap_size) break;
        if (child + 1 < heap_size &&
            before(heap[child + 1].t, heap[child + 1].seq, heap[child].t, heap[child].seq))
            child++;
        if (before(last.t, last.seq, heap[child].t, heap[child].seq)) break;
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = last;
    return top;
}

/* --- queue 2: calendar queue ----------------------------------------------------------------- */

static double *cq_t;
static uint64_t *cq_seq;
static int64_t *cq_bucket;
static int32_t *cq_kind, *cq_client, *cq_next, *cq_free;
static int32_t *cq_head;
static size_t cq_size, cq_nfree;
static uint64_t cq_mask;
static int64_t cq_current;
static double cq_inv_width;

static void cq_init(size_t capacity, int clients) {
    size_t ring = 1;
    while (ring < 4 * (size_t)clients) ring <<= 1;
    cq_mask = ring - 1;
    double horizon = half_rtt + 4.0 * jitter;
    double width = horizon > 0.0 ? horizon / (double)ring : 1.0;
    cq_inv_width = 1.0 / width;
    cq_head = malloc(sizeof(int32_t) * ring);
    for (size_t i = 0; i < ring; i++) cq_head[i] = -1;
    cq_t = malloc(sizeof(double) * capacity);
    cq_seq = malloc(sizeof(uint64_t) * capacity);
    cq_bucket = malloc(sizeof(int64_t) * capacity);
    cq_kind = malloc(sizeof(int32_t) * capacity);
    cq_client = malloc(sizeof(int32_t) * capacity);
    cq_next = malloc(sizeof(int32_t) * capacity);
    cq_free = malloc(sizeof(int32_t) * capacity);
    for (size_t i = 0; i < capacity; i++) cq_free[i] = (int32_t)(capacity - 1 - i);
    cq_nfree = capacity;
    cq_size = 0;
    cq_current = 0;
}

static inline void cq_push(double t, int kind, int client) {
    int32_t n = cq_free[--cq_nfree];
    uint64_t q = next_seq++;
    int64_t b = (int64_t)(t * cq_inv_width);
    cq_t[n] = t;
    cq_seq[n] = q;
    cq_bucket[n] = b;
    cq_kind[n] = kind;
    cq_client[n] = client;
    int32_t *link = &cq_head[(uint64_t)b & cq_mask];
    while (*link >= 0 && before(cq_t[*link], cq_seq[*link], t, q)) link = &cq_next[*link];
    cq_next[n] = *link;
    *link = n;
    cq_size++;
}

static inline int cq_empty(void) { return cq_size == 0; }

/* The earliest event's node; moves the current bucket to it. */
static inline int32_t cq_first(void) {
    for (uint64_t scanned = 0; scanned <= cq_mask; scanned++) {
        int32_t n = cq_head[(uint64_t)cq_current & cq_mask];
        if (n >= 0 && cq_bucket[n] == cq_current) return n;
        cq_current++;
    }
    int64_t least = INT64_MAX; /* a lap of empty buckets: jump to the earliest event's */
    for (uint64_t i = 0; i <= cq_mask; i++) {
        int32_t n = cq_head[i];
        if (n >= 0 && cq_bucket[n] < least) least = cq_bucket[n];
    }
    cq_current = least;
    return cq_head[(uint64_t)least & cq_mask];
}

static inline double cq_first_t(void) { return cq_t[cq_first()]; }

static inline Event cq_pop(void) {
    int32_t n = cq_first();
    cq_head[(uint64_t)cq_current & cq_mask] = cq_next[n];
    cq_free[cq_nfree++] = n;
    cq_size--;
    Event e = {cq_t[n], cq_seq[n], cq_kind[n], cq_client[n]};
    return e;
}

/* --- the loop, once per queue ---------------------------------------------------------------- */

typedef struct {
    uint64_t granted, events, checksum;
    double latency_sum;
} Totals;

static inline uint64_t mix(uint64_t h, uint64_t x) {
    h ^= x + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return h;
}

#define CLOSED_LOOP(NAME, PUSH, EMPTY, FIRST_T, POP)                                         \
    static Totals NAME(double duration, int locks) {                                        \
        Totals z = {0, 0, 0, 0.0};                                                          \
        while (!EMPTY() && FIRST_T() < duration) {                                          \
            Event e = POP();                                                                \
            z.events++;                                                                     \
            int c = e.client;                                                               \
            int k = lock_of[c];                                                             \
            if (e.kind == ACQUIRE) {                                                        \
                next_waiter[c] = -1;                                                        \
                if (holder[k] < 0) {                                                        \
                    holder[k] = tail[k] = c;                                                \
                    PUSH(fifo(&down_last[c], e.t + hop()), GRANT, c);                       \
                } else {                                                                    \
                    next_waiter[tail[k]] = c;                                               \
                    tail[k] = c;                                                            \
                }                                                                           \
            } else if (e.kind == GRANT) {                                                   \
                z.granted++;                                                                \
                z.latency_sum += e.t - sent_at[c];                                          \
                uint64_t bits;                                                              \
                memcpy(&bits, &e.t, sizeof bits);                                           \
                z.checksum = mix(mix(z.checksum, (uint64_t)c), bits);                       \
                sent_at[c] = e.t;                                                           \
                PUSH(fifo(&up_last[c], e.t + hop()), RELEASE, c);                           \
            } else {                                                                        \
                int w = next_waiter[c];                                                     \
                holder[k] = w;                                                              \
                if (w < 0) tail[k] = -1;                                                    \
                else PUSH(fifo(&down_last[w], e.t + hop()), GRANT, w);                      \
                lock_of[c] = (int32_t)(next_random(&lock_rng) % (uint64_t)locks);           \
                PUSH(e.t, ACQUIRE, c);                                                      \
            }                                                                               \
        }                                                                                   \
        return z;                                                                           \
    }

CLOSED_LOOP(run_heap, heap_push, heap_empty, heap_first_t, heap_pop)
CLOSED_LOOP(run_calendar, cq_push, cq_empty, cq_first_t, cq_pop)

static int32_t *ints(int n, int32_t value) {
    int32_t *a = malloc(sizeof(int32_t) * (size_t)n);
    for (int i = 0; i < n; i++) a[i] = value;
    return a;
}

static double *zeros(int n) { return calloc((size_t)n, sizeof(double)); }

int main(int argc, char **argv) {
    if (argc != 8 || (strcmp(argv[7], "heap") != 0 && strcmp(argv[7], "calendar") != 0)) {
        fprintf(stderr, "usage: closed_loop CLIENTS LOCKS RTT_US JITTER_US DURATION_US SEED "
                        "heap|calendar\n");
        return 2;
    }
    int clients = atoi(argv[1]);
    int locks = atoi(argv[2]);
    half_rtt = atof(argv[3]) / 2.0;
    jitter = atof(argv[4]);
    double duration = atof(argv[5]);
    uint64_t seed = strtoull(argv[6], NULL, 10);
    int calendar = strcmp(argv[7], "calendar") == 0;
    if (clients < 1 || locks < 1 || half_rtt < 0.0 || jitter < 0.0) {
        fprintf(stderr, "closed_loop: CLIENTS and LOCKS must be >= 1, RTT_US and JITTER_US "
                        ">= 0\n");
        return 2;
    }
    lock_rng.s = seed;
    delay_rng.s = seed ^ 0xD1B54A32D192ED03ULL;
    size_t capacity = (size_t)(2 * clients + 2);
    heap = malloc(sizeof(Event) * capacity);
    if (calendar) cq_init(capacity, clients);
    lock_of = ints(clients, 0);
    next_waiter = ints(clients, -1);
    holder = ints(locks, -1);
    tail = ints(locks, -1);
    up_last = zeros(clients);
    down_last = zeros(clients);
    sent_at = zeros(clients);
    for (int c = 0; c < clients; c++) {
        lock_of[c] = (int32_t)(next_random(&lock_rng) % (uint64_t)locks);
        double at = fifo(&up_last[c], hop());
        if (calendar) cq_push(at, ACQUIRE, c);
        else heap_push(at, ACQUIRE, c);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    Totals z = calendar ? run_calendar(duration, locks) : run_heap(duration, locks);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%llu %llu %.9f %.17g %llu\n", (unsigned long long)z.granted,
           (unsigned long long)z.events, seconds, z.latency_sum, (unsigned long long)z.checksum);
    return 0;
}
