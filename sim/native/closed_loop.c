/* The microbenchmark's closed loop as a native event loop: the upper reference of
 * `netlock bench` (sim/native_bench.py compiles it with the machine's C compiler).
 *
 * The model of sim/baseline.py: each client picks a lock uniformly, its acquire reaches the
 * lock manager half a round trip later, waits in the lock's FIFO queue (exclusive, one
 * holder), the grant reaches the client half a round trip later, the client releases at once
 * (no think time) and sends its next acquire at the same moment; the release frees the lock
 * half a round trip later and grants the next waiter. Three events per request (acquire
 * arrival, grant arrival, release arrival) on a binary min-heap ordered by (time, sequence).
 * No leases, loss, jitter or recording.
 *
 * Usage: closed_loop CLIENTS LOCKS RTT_US DURATION_US SEED
 * Prints: granted-requests events loop-cpu-seconds
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ACQUIRE = 0, GRANT = 1, RELEASE = 2 };

typedef struct {
    double t;
    uint64_t seq;
    int32_t kind;
    int32_t client;
} Event;

static Event *heap;
static size_t size;
static uint64_t next_seq;

static int before(const Event *a, const Event *b) {
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push(double t, int kind, int client) {
    Event e = {t, next_seq++, kind, client};
    size_t i = size++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (before(&heap[parent], &e)) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = e;
}

static Event pop(void) {
    Event top = heap[0];
    Event last = heap[--size];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= size) break;
        if (child + 1 < size && before(&heap[child + 1], &heap[child])) child++;
        if (before(&last, &heap[child])) break;
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = last;
    return top;
}

static uint64_t rng_state;

static uint64_t next_random(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: closed_loop CLIENTS LOCKS RTT_US DURATION_US SEED\n");
        return 2;
    }
    int clients = atoi(argv[1]);
    int locks = atoi(argv[2]);
    double half_rtt = atof(argv[3]) / 2.0;
    double duration = atof(argv[4]);
    rng_state = strtoull(argv[5], NULL, 10);
    heap = malloc(sizeof(Event) * (size_t)(2 * clients + 2));
    int32_t *lock_of = malloc(sizeof(int32_t) * (size_t)clients);
    int32_t *next_waiter = malloc(sizeof(int32_t) * (size_t)clients);
    int32_t *holder = malloc(sizeof(int32_t) * (size_t)locks);
    int32_t *tail = malloc(sizeof(int32_t) * (size_t)locks);
    for (int k = 0; k < locks; k++) holder[k] = tail[k] = -1;
    for (int c = 0; c < clients; c++) {
        lock_of[c] = (int32_t)(next_random() % (uint64_t)locks);
        push(half_rtt, ACQUIRE, c);
    }
    uint64_t granted = 0, events = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    while (size > 0 && heap[0].t < duration) {
        Event e = pop();
        events++;
        int c = e.client;
        int k = lock_of[c];
        if (e.kind == ACQUIRE) {
            next_waiter[c] = -1;
            if (holder[k] < 0) {
                holder[k] = tail[k] = c;
                push(e.t + half_rtt, GRANT, c);
            } else {
                next_waiter[tail[k]] = c;
                tail[k] = c;
            }
        } else if (e.kind == GRANT) {
            granted++;
            push(e.t + half_rtt, RELEASE, c);
        } else {
            int w = next_waiter[c];
            holder[k] = w;
            if (w < 0) tail[k] = -1;
            else push(e.t + half_rtt, GRANT, w);
            lock_of[c] = (int32_t)(next_random() % (uint64_t)locks);
            push(e.t, ACQUIRE, c);
        }
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%llu %llu %.9f\n", (unsigned long long)granted, (unsigned long long)events, seconds);
    return 0;
}
