# A NumPy emulation of potrf_vgemm_kernel's index logic (cuda/kernels/potrf_gemm.cuh): every
# block of one matrix, every thread of a block, the shared-memory chunks as the kernel loads
# them (lower and upper storage), S checked against L(j:n, 0:j) L(j:j+w, 0:j)^T; unwritten
# elements of S stay NaN and fail the check. Both tiles: vgemm_fma (each thread's 4 x NB/8
# outputs) and vgemm_mma (each warp's 8 x 8 x 4 fragments with WMMA's addressing: matrix_a
# column-major, matrix_b row-major, the accumulator stored column-major, all with the given
# leading dimension; the tile copied out of shared memory). For reading the kernel's indexing
# without a GPU:
#
#   python3 bench/gpu/emulate_vgemm.py        # prints the largest difference per case
#
# Keep its constants (MT, KC, TPB, the thread's 4 x NB/8 outputs) in step with the kernel's.
import numpy as np
MT, KC, TPB = 64, 16, 128
def elem(upper, e, rows):
    return (e // KC, e % KC) if upper else (e % rows, e // rows)
def run(n, j, NB, upper, ld, mma=False):
    rng = np.random.default_rng(n * 1000 + j)
    data = rng.standard_normal(ld * n)
    def at(r, c):  # factor_at on L = data + (upper ? j*ld : j)
        base = j * ld if upper else j
        return base + (c + r * ld if upper else r + c * ld)
    m = n - j; w = min(m, NB)
    lds = n + 3
    S = np.full(lds * NB, np.nan)
    RM, RN = MT // 16, NB // 8
    LA, LB = MT * KC // TPB, NB * KC // TPB
    pad = 4 if mma else 1
    LDA, LDB, LDST = MT + pad, NB + pad, MT + 4
    for by in range((m + MT - 1) // MT + 1):
        r0 = by * MT
        if j + r0 >= n: continue
        acc = np.zeros((TPB, RM, RN))
        frag = np.zeros((TPB // 32, 2, NB // 8, 8, 8))  # warp, x, y: 8 x 8 accumulators
        for p0 in range(0, j, KC):
            sa = np.full(KC * LDA, np.nan); sb = np.full(KC * LDB, np.nan)
            for t in range(TPB):
                for q in range(LA):
                    r, p = elem(upper, t + q * TPB, MT)
                    sa[p * LDA + r] = data[at(r0 + r, p0 + p)] if r0 + r < m else 0.0
                for q in range(LB):
                    r, p = elem(upper, t + q * TPB, NB)
                    sb[p * LDB + r] = data[at(r, p0 + p)] if r < w else 0.0
            if mma:
                for v in range(TPB // 32):
                    for k0 in range(0, KC, 4):
                        for x in range(2):
                            pa = k0 * LDA + 16 * v + 8 * x  # col_major: (i, k) at pa + i + k LDA
                            A = np.array([[sa[pa + i + k * LDA] for k in range(4)] for i in range(8)])
                            for y in range(NB // 8):
                                pb = k0 * LDB + 8 * y  # row_major: (k, c) at pb + k LDB + c
                                B = np.array([[sb[pb + k * LDB + c] for c in range(8)] for k in range(4)])
                                frag[v, x, y] += A @ B
                continue
            for t in range(TPB):
                tr, tc = t % 16, t // 16
                for kk in range(KC):
                    av = np.array([sa[kk * LDA + tr + 16 * x] for x in range(RM)])
                    bv = np.array([sb[kk * LDB + tc + 8 * y] for y in range(RN)])
                    acc[t] += np.outer(av, bv)
        if mma:
            stage = np.full(NB * LDST, np.nan)
            for v in range(TPB // 32):
                for x in range(2):
                    for y in range(NB // 8):
                        ps = 8 * y * LDST + 16 * v + 8 * x  # mem_col_major: (i, c) at ps + i + c LDST
                        for i in range(8):
                            for c in range(8):
                                stage[ps + i + c * LDST] = frag[v, x, y, i, c]
            for e in range(MT * NB):
                r, c = e % MT, e // MT
                if r0 + r < m and c < w: S[r0 + r + c * lds] = stage[c * LDST + r]
            continue
        for t in range(TPB):
            tr, tc = t % 16, t // 16
            for x in range(RM):
                for y in range(RN):
                    r, c = r0 + tr + 16 * x, tc + 8 * y
                    if r < m and c < w: S[r + c * lds] = acc[t][x][y]
    # reference: L(j+r, p) for p < j
    Lfull = np.array([[data[at(r, p)] for p in range(j)] for r in range(m)]).reshape(m, j)
    ref = Lfull @ Lfull[:w].T
    got = np.array([[S[r + c * lds] for c in range(w)] for r in range(m)])
    return np.max(np.abs(got - ref)) if m > 0 else 0.0
worst = 0
for mma in (False, True):
    for upper in (False, True):
        for n, j in [(33, 32), (40, 32), (97, 64), (129, 64), (200, 32), (300, 96)]:
            e = run(n, j, 32, upper, n + 2, mma)
            worst = max(worst, e)
            print("mma" if mma else "fma", "upper" if upper else "lower", n, j, e)
print("worst", worst)
