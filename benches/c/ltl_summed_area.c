/* A plain one-thread two-state Larger-than-Life loop, for comparison with lifegen's CPU backend.
 * One byte per cell, torus, Moore neighbourhood; each cell's box count is 4 lookups in a
 * summed-area table (2-D prefix sums, Golly's O(1)-per-cell method), built every generation over
 * the universe padded by r on every side with wrapped copies. Only the 2r+2 table rows that the
 * current output row needs are kept (a ring), so the table stays in cache; --full-table keeps all
 * (h+2r+1) x (w+2r+1) entries instead. Entries are uint32_t: a box sum is a difference of four
 * entries, exact modulo 2^32 even where the entries themselves wrap.
 * The soup is lifegen's (runtime/src/universe.rs, Universe::random): row y draws from SplitMix64
 * seeded with seed ^ y*0xD1B54A32D192ED03, 64 cells per draw at density 0.5, else one draw per
 * cell (alive when below density*2^64), cell x in bit x%64 of word x/64. So the population after
 * N generations equals `lifegen run --rule RULE --size WxH --gens N --density D --seed S`'s.
 * Build: gcc -O3 -march=native -o ltl_summed_area benches/c/ltl_summed_area.c
 * Run:   ./ltl_summed_area R16,C0,M0,S170..296,B170..300,NM 2048 2048 100 [DENSITY [SEED]]
 *        ./ltl_summed_area --check   (the table against a naive O(r^2) count; non-zero on mismatch) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    long r;
    int centre;              /* M1: the cell itself is counted */
    uint32_t s_lo, s_hi;     /* survival range */
    uint32_t b_lo, b_hi;     /* birth range */
} Rule;

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Golly form: R<r>,C<0|2>,M<0|1>,S<a>..<b>,B<c>..<d>,NM (fields in any order, NM optional). */
static int parse_rule(const char *text, Rule *rule) {
    int have_r = 0, have_m = 0, have_s = 0, have_b = 0;
    char buf[256];
    if (strlen(text) >= sizeof buf) return 0;
    strcpy(buf, text);
    for (char *field = strtok(buf, ","); field; field = strtok(NULL, ",")) {
        unsigned long a, b;
        char *end;
        switch (field[0]) {
        case 'R': case 'r':
            rule->r = strtol(field + 1, &end, 10);
            if (*end || rule->r < 1 || rule->r > 500) return 0;
            have_r = 1;
            break;
        case 'C': case 'c':
            if (strcmp(field + 1, "0") && strcmp(field + 1, "2")) return 0;
            break;
        case 'M': case 'm':
            if (strcmp(field + 1, "0") && strcmp(field + 1, "1")) return 0;
            rule->centre = field[1] == '1';
            have_m = 1;
            break;
        case 'S': case 's': case 'B': case 'b':
            if (sscanf(field + 1, "%lu..%lu", &a, &b) != 2 || a > b) return 0;
            if (field[0] == 'S' || field[0] == 's') { rule->s_lo = a; rule->s_hi = b; have_s = 1; }
            else { rule->b_lo = a; rule->b_hi = b; have_b = 1; }
            break;
        case 'N': case 'n':
            if (strcmp(field + 1, "M") && strcmp(field + 1, "m")) return 0; /* Moore only */
            break;
        default:
            return 0;
        }
    }
    return have_r && have_m && have_s && have_b;
}

static void soup(uint8_t *cells, long w, long h, double density, uint64_t seed) {
    uint64_t threshold = (uint64_t)(density * 18446744073709551616.0);
    for (long y = 0; y < h; y++) {
        uint64_t s = seed ^ ((uint64_t)y * 0xD1B54A32D192ED03ull);
        for (long x0 = 0; x0 < w; x0 += 64) {
            uint64_t word = 0;
            if (density == 0.5) word = splitmix(&s);
            else if (density >= 1.0) word = ~0ull;
            else for (int bit = 0; bit < 64; bit++) word |= (uint64_t)(splitmix(&s) < threshold) << bit;
            for (long x = x0; x < w && x < x0 + 64; x++) cells[y * w + x] = word >> (x - x0) & 1;
        }
    }
}

/* One row of the padded universe: pw = w + 2r cells, cell px being row[(px - r) mod w]. */
static void pad_row(const uint8_t *row, long w, long r, uint8_t *out) {
    long pw = w + 2 * r, src = ((-r) % w + w) % w, done = 0;
    while (done < pw) {
        long n = w - src < pw - done ? w - src : pw - done;
        memcpy(out + done, row + src, n);
        done += n;
        src = 0;
    }
}

typedef struct {
    long w, h, r, stride, rows;  /* rows: table rows kept (2r+2, or h+2r+1 for the full table) */
    uint32_t *table;             /* row py of the table at (py % rows) * stride */
    uint8_t *padded;             /* one padded universe row */
} Stepper;

static int stepper_init(Stepper *st, long w, long h, long r, int full) {
    st->w = w; st->h = h; st->r = r;
    st->stride = w + 2 * r + 1;
    st->rows = full ? h + 2 * r + 1 : 2 * r + 2;
    st->table = malloc(sizeof(uint32_t) * st->stride * st->rows);
    st->padded = malloc(w + 2 * r);
    return st->table && st->padded;
}

/* Table row py+1 from row py: entry x is the live cells of padded rows 0..py, columns 0..x-1. */
static inline void table_row(Stepper *st, const uint8_t *a, long py) {
    long w = st->w, h = st->h, r = st->r, pw = w + 2 * r;
    const uint32_t *prev = st->table + (py % st->rows) * st->stride;
    uint32_t *next = st->table + ((py + 1) % st->rows) * st->stride;
    const uint8_t *p = st->padded;
    pad_row(a + (((py - r) % h + h) % h) * w, w, r, st->padded);
    next[0] = 0;
    /* The row's running sum is a chain of dependent adds; four chains, over the four quarters of
     * the row, each started at the (vectorised) count of the quarters before it, overlap. That
     * made the whole step about 10% faster on a Zen 3 EPYC (2.2e9 -> 2.4e9 cell updates/s). */
    long q = pw / 4;
    uint32_t run0 = 0, run1 = 0, run2, run3;
    for (long x = 0; x < q; x++) run1 += p[x];
    run2 = run1;
    for (long x = q; x < 2 * q; x++) run2 += p[x];
    run3 = run2;
    for (long x = 2 * q; x < 3 * q; x++) run3 += p[x];
    for (long x = 0; x < q; x++) {
        run0 += p[x];
        run1 += p[x + q];
        run2 += p[x + 2 * q];
        run3 += p[x + 3 * q];
        next[x + 1] = prev[x + 1] + run0;
        next[x + q + 1] = prev[x + q + 1] + run1;
        next[x + 2 * q + 1] = prev[x + 2 * q + 1] + run2;
        next[x + 3 * q + 1] = prev[x + 3 * q + 1] + run3;
    }
    for (long x = 4 * q; x < pw; x++) {
        run3 += p[x];
        next[x + 1] = prev[x + 1] + run3;
    }
}

static void step(Stepper *st, const Rule *rule, const uint8_t *restrict a, uint8_t *restrict b) {
    long w = st->w, h = st->h, r = st->r, d = 2 * r + 1;
    memset(st->table, 0, sizeof(uint32_t) * st->stride); /* table row 0 */
    for (long py = 0; py < d - 1; py++) table_row(st, a, py);
    /* Ranges as lo and width, so "in range" is one unsigned compare; M0 subtracts the centre. */
    const uint32_t s_lo = rule->s_lo, s_span = rule->s_hi - rule->s_lo;
    const uint32_t b_lo = rule->b_lo, b_span = rule->b_hi - rule->b_lo;
    const uint32_t not_centre = !rule->centre;
    for (long y = 0; y < h; y++) {
        table_row(st, a, y + d - 1); /* rows y .. y+d of the table are now there */
        const uint32_t *top = st->table + (y % st->rows) * st->stride;
        const uint32_t *bot = st->table + ((y + d) % st->rows) * st->stride;
        const uint8_t *in = a + y * w;
        uint8_t *out = b + y * w;
        for (long x = 0; x < w; x++) {
            uint32_t cell = in[x];
            uint32_t count = bot[x + d] - top[x + d] - bot[x] + top[x] - (cell & not_centre);
            uint32_t survive = count - s_lo <= s_span, born = count - b_lo <= b_span;
            out[x] = cell ? survive : born;
        }
    }
}

/* The same generation by counting every cell of the box, for --check. */
static void step_naive(const Rule *rule, long w, long h, const uint8_t *a, uint8_t *b) {
    long r = rule->r;
    for (long y = 0; y < h; y++)
        for (long x = 0; x < w; x++) {
            uint32_t count = 0;
            for (long dy = -r; dy <= r; dy++)
                for (long dx = -r; dx <= r; dx++) {
                    if (!rule->centre && dx == 0 && dy == 0) continue;
                    count += a[((y + dy) % h + h) % h * w + ((x + dx) % w + w) % w];
                }
            uint8_t cell = a[y * w + x];
            b[y * w + x] = cell ? (count >= rule->s_lo && count <= rule->s_hi)
                                : (count >= rule->b_lo && count <= rule->b_hi);
        }
}

static int check(void) {
    /* 100x80 as asked; 13x11 and 7x5 have boxes wider than the torus (cells counted twice). */
    const long sizes[][2] = {{100, 80}, {13, 11}, {7, 5}, {129, 3}};
    uint64_t seed = 12345;
    int failures = 0, cases = 0;
    for (int si = 0; si < 4; si++)
        for (long r = 1; r <= 7; r++)
            for (int centre = 0; centre <= 1; centre++)
                for (int full = 0; full <= 1; full++) {
                    long w = sizes[si][0], h = sizes[si][1], cells = (2 * r + 1) * (2 * r + 1);
                    Rule rule = {.r = r, .centre = centre};
                    /* Random ranges, centred near half the box so the soup neither dies nor fills. */
                    uint32_t lo = cells / 4 + splitmix(&seed) % (cells / 4 + 1);
                    rule.s_lo = lo; rule.s_hi = lo + splitmix(&seed) % (cells / 3 + 1);
                    lo = cells / 4 + splitmix(&seed) % (cells / 4 + 1);
                    rule.b_lo = lo; rule.b_hi = lo + splitmix(&seed) % (cells / 4 + 1);
                    if (r == 1) { rule.s_lo = 2 + centre; rule.s_hi = 3 + centre; rule.b_lo = rule.b_hi = 3; }
                    double density = 0.2 + 0.1 * (splitmix(&seed) % 7);
                    uint8_t *a = malloc(w * h), *b = malloc(w * h), *na = malloc(w * h), *nb = malloc(w * h);
                    soup(a, w, h, density, splitmix(&seed));
                    memcpy(na, a, w * h);
                    Stepper st;
                    if (!a || !b || !na || !nb || !stepper_init(&st, w, h, r, full)) { fprintf(stderr, "out of memory\n"); return 1; }
                    int bad = 0;
                    for (int g = 0; g < 3 && !bad; g++) {
                        step(&st, &rule, a, b);
                        step_naive(&rule, w, h, na, nb);
                        uint8_t *t = a; a = b; b = t;
                        t = na; na = nb; nb = t;
                        if (memcmp(a, na, w * h)) {
                            printf("MISMATCH: %ldx%ld R%ld,C0,M%d,S%u..%u,B%u..%u,NM%s, generation %d\n", w, h, r,
                                   centre, rule.s_lo, rule.s_hi, rule.b_lo, rule.b_hi, full ? " (full table)" : "", g + 1);
                            bad = 1;
                        }
                    }
                    failures += bad;
                    cases++;
                    free(a); free(b); free(na); free(nb); free(st.table); free(st.padded);
                }
    printf("check: %d of %d cases agree with the naive count (3 generations each)\n", cases - failures, cases);
    return failures != 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--check")) return check();
    int full = argc > 1 && !strcmp(argv[1], "--full-table");
    if (full) { argc--; argv++; }
    if (argc < 5 || argc > 7) {
        fprintf(stderr, "usage: %s [--full-table] RULE WIDTH HEIGHT GENS [DENSITY [SEED]]   (density 0.5, seed 1 by default)\n"
                        "       %s --check\n", argv[0], argv[0]);
        return 2;
    }
    Rule rule = {0};
    if (!parse_rule(argv[1], &rule)) { fprintf(stderr, "bad rule %s (want e.g. R16,C0,M0,S170..296,B170..300,NM)\n", argv[1]); return 2; }
    long w = atol(argv[2]), h = atol(argv[3]), gens = atol(argv[4]);
    double density = argc > 5 ? atof(argv[5]) : 0.5;
    uint64_t seed = argc > 6 ? strtoull(argv[6], NULL, 10) : 1;
    if (w <= 0 || h <= 0 || gens < 0 || density < 0 || density > 1) { fprintf(stderr, "bad arguments\n"); return 2; }
    uint8_t *a = malloc(w * h), *b = malloc(w * h);
    Stepper st;
    if (!a || !b || !stepper_init(&st, w, h, rule.r, full)) { fprintf(stderr, "out of memory\n"); return 1; }
    soup(a, w, h, density, seed);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long g = 0; g < gens; g++) {
        step(&st, &rule, a, b);
        uint8_t *tmp = a; a = b; b = tmp;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    long pop = 0;
    for (long i = 0; i < w * h; i++) pop += a[i];
    printf("generations: %ld in %.3f s\n", gens, s);
    printf("population: %ld\n", pop);
    printf("cell updates/s: %.3e\n", (double)w * h * gens / s);
    return 0;
}
