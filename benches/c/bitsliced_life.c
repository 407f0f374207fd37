/* A plain one-thread bit-sliced B3/S23 loop, for comparison with lifegen's CPU backend.
 * 64 cells per uint64_t, torus, full-adder neighbour count, one generation per sweep.
 * Build: gcc -O3 -march=native -o bitsliced_life benches/c/bitsliced_life.c
 * Run:   ./bitsliced_life 16384 16384 100                                                     */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The next state of the 64 cells of word i; il and ir are the words to its left and right. */
static inline uint64_t step_word(const uint64_t *up, const uint64_t *mid, const uint64_t *dn,
                                 long i, long il, long ir) {
    const uint64_t *rows[3] = {up, mid, dn};
    uint64_t nb[8];
    int k = 0;
    for (int r = 0; r < 3; r++) {
        uint64_t c = rows[r][i];
        nb[k++] = (c << 1) | (rows[r][il] >> 63);
        nb[k++] = (c >> 1) | (rows[r][ir] << 63);
        if (r != 1) nb[k++] = c;
    }
    /* Count the 8 neighbours with full adders: ones, twos, fours (any carry into bit 2). */
    uint64_t s0 = nb[0] ^ nb[1] ^ nb[2], c0 = (nb[0] & nb[1]) | (nb[2] & (nb[0] ^ nb[1]));
    uint64_t s1 = nb[3] ^ nb[4] ^ nb[5], c1 = (nb[3] & nb[4]) | (nb[5] & (nb[3] ^ nb[4]));
    uint64_t s2 = s0 ^ s1 ^ nb[6], c2 = (s0 & s1) | (nb[6] & (s0 ^ s1));
    uint64_t ones = s2 ^ nb[7], c3 = s2 & nb[7];
    uint64_t t = c0 ^ c1 ^ c2, fours = (c0 & c1) | (c2 & (c0 ^ c1));
    uint64_t twos = t ^ c3;
    fours |= t & c3;
    return twos & ~fours & (ones | mid[i]);
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s WIDTH HEIGHT GENS (WIDTH a multiple of 64)\n", argv[0]); return 2; }
    long w = atol(argv[1]), h = atol(argv[2]), gens = atol(argv[3]);
    if (w <= 0 || w % 64 || h <= 0 || gens < 0) { fprintf(stderr, "bad arguments\n"); return 2; }
    long n = w / 64;
    uint64_t *a = malloc(sizeof(uint64_t) * n * h), *b = malloc(sizeof(uint64_t) * n * h);
    if (!a || !b) { fprintf(stderr, "out of memory\n"); return 1; }
    uint64_t seed = 1;
    for (long i = 0; i < n * h; i++) a[i] = splitmix(&seed);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long g = 0; g < gens; g++) {
        for (long y = 0; y < h; y++) {
            const uint64_t *up = a + ((y + h - 1) % h) * n, *mid = a + y * n, *dn = a + ((y + 1) % h) * n;
            uint64_t *out = b + y * n;
            out[0] = step_word(up, mid, dn, 0, n - 1, n > 1 ? 1 : 0);
            for (long i = 1; i < n - 1; i++) out[i] = step_word(up, mid, dn, i, i - 1, i + 1);
            if (n > 1) out[n - 1] = step_word(up, mid, dn, n - 1, n - 2, 0);
        }
        uint64_t *tmp = a; a = b; b = tmp;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    long pop = 0;
    for (long i = 0; i < n * h; i++) pop += __builtin_popcountll(a[i]);
    printf("population: %ld\n", pop);
    printf("cell updates/s: %.3e\n", (double)w * h * gens / s);
    return 0;
}
