// Plain CUDA C for B3/S23, one 32-cell word per thread: shift the three rows, add the 8
// neighbour words bit-sliced (a ripple of half adders saturating at 4), apply the rule. What
// `lifegen count --sass` compiles with nvcc and ptxas as the "plain C" baseline.
extern "C" __global__ void plain(const unsigned* src, unsigned* dst, int words, int rows) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= words || y >= rows) return;
    unsigned n[8]; int k = 0;
    for (int dy = -1; dy <= 1; dy++) {
        int yy = (y + dy + rows) % rows;
        unsigned w = src[yy * words + (x + words - 1) % words], c = src[yy * words + x], e = src[yy * words + (x + 1) % words];
        unsigned l = (c << 1) | (w >> 31), r = (c >> 1) | (e << 31);
        n[k++] = l; n[k++] = r; if (dy != 0) n[k++] = c;
    }
    unsigned centre = src[y * words + x];
    unsigned s0 = 0, s1 = 0, s2 = 0;
    for (int i = 0; i < 8; i++) { unsigned c0 = s0 & n[i]; s0 ^= n[i]; unsigned c1 = s1 & c0; s1 ^= c0; s2 |= c1; }
    dst[y * words + x] = ~s2 & s1 & (s0 | centre);
}
