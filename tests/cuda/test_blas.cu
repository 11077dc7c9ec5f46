// GPU gemm and trsm against the host reference, over sizes x counts x layouts x flags.
#include "support.cuh"

namespace {
using namespace tbc;

const tb::op all_ops[] = {tb::op::no_trans, tb::op::trans, tb::op::conj_trans};

template <class T, layout L>
void run_gemm(layout_c<L> l, tb::op ta, tb::op tb_, T alpha, T beta, int m, int n, int k,
              index_t count) {
  INFO("gemm " << name(L) << " " << name(ta) << name(tb_) << " m=" << m << " n=" << n << " k=" << k
               << " count=" << count << " alpha=" << alpha << " beta=" << beta);
  const bool nA = ta == tb::op::no_trans, nB = tb_ == tb::op::no_trans;
  tbatch<T> A(nA ? m : k, nA ? k : m, count), B(nB ? k : n, nB ? n : k, count), C(m, n, count);
  // With alpha == 0 A and B stay poison, with beta == 0 C does: gemm must not read them.
  if (alpha != T(0)) {
    A.fill_random();
    B.fill_random();
    for (index_t q = 0; q < count; ++q)
      if (nan_k(q)) A.at(q, 0, 0) = nan<T>();
  }
  if (beta != T(0)) C.fill_random();
  A.upload(), B.upload(), C.upload();
  tb::gemm(host_ref, ta, tb_, alpha, A.hview(l), B.hview(l), beta, C.hview(l));
  tb::gemm(tb::cuda::policy<>{}, ta, tb_, alpha, A.dview(l), B.dview(l), beta, C.dview(l));
  check_all(arg(A, "A"), arg(B, "B"), arg(C, "C"));
}

template <class T>
void gemm_alpha_beta(int pick, T& alpha, T& beta) {
  const T ab[3][2] = {{T(1), T(0)}, {T(-0.5), T(2)}, {T(0), T(0.5)}};
  alpha = ab[pick % 3][0], beta = ab[pick % 3][1];
}

}  // namespace

TEMPLATE_TEST_CASE("cuda gemm, square sizes, every transpose", "[gemm]", float, double) {
  using T = TestType;
  for_layouts([](auto l) {
    for (int s : sizes())
      for (index_t count : counts())
        for (int t = 0; t < 9; ++t) {
          T alpha, beta;
          gemm_alpha_beta(t + s, alpha, beta);  // every (ta, tb) meets every (alpha, beta)
          run_gemm<T>(l, all_ops[t / 3], all_ops[t % 3], alpha, beta, s, s, s, count);
        }
  });
}

TEMPLATE_TEST_CASE("cuda gemm, rectangular shapes", "[gemm]", float, double) {
  using T = TestType;
  const int shapes[][3] = {{1, 7, 64},  {17, 4, 33}, {5, 3, 2},
                           {33, 31, 1}, {2, 64, 9},  {32, 1, 13}};
  for_layouts([&](auto l) {
    for (int s = 0; s < 6; ++s)
      for (index_t count : counts())
        for (int t = 0; t < 9; ++t) {
          T alpha, beta;
          gemm_alpha_beta(t + s, alpha, beta);
          run_gemm<T>(l, all_ops[t / 3], all_ops[t % 3], alpha, beta, shapes[s][0], shapes[s][1],
                      shapes[s][2], count);
        }
  });
}

namespace {
template <class T, layout L>
void run_trsm(layout_c<L> l, tb::side sd, tb::uplo ul, tb::op ta, tb::diag dg, T alpha, int s,
              int r, index_t count) {
  INFO("trsm " << name(L) << (sd == tb::side::left ? " left " : " right ") << name(ul) << " "
               << name(ta) << (dg == tb::diag::unit ? " unit" : " non-unit") << " n=" << s
               << " rhs=" << r << " count=" << count << " alpha=" << alpha);
  const bool left = sd == tb::side::left;
  tbatch<T> A(s, s, count), B(left ? s : r, left ? r : s, count);
  fill_triangular(A, ul, dg);
  if (alpha != T(0)) fill_rhs(B);  // with alpha == 0, B is poison: trsm must not read it
  A.upload(), B.upload();
  tb::trsm(host_ref, sd, ul, ta, dg, alpha, A.hview(l), B.hview(l));
  tb::trsm(tb::cuda::policy<>{}, sd, ul, ta, dg, alpha, A.dview(l), B.dview(l));
  check_all(arg(A, "A"), arg(B, "B"));
}
}  // namespace

TEMPLATE_TEST_CASE("cuda trsm, every side, triangle, transpose and diagonal", "[trsm]", float,
                   double) {
  using T = TestType;
  const T alphas[] = {T(1), T(-0.5), T(0)};
  for_layouts([&](auto l) {
    for (int s : sizes())
      for (index_t count : counts()) {
        int combo = 0;
        for (tb::side sd : {tb::side::left, tb::side::right})
          for (tb::uplo ul : {tb::uplo::lower, tb::uplo::upper})
            for (tb::op ta : all_ops)
              for (tb::diag dg : {tb::diag::non_unit, tb::diag::unit}) {
                run_trsm<T>(l, sd, ul, ta, dg, alphas[(combo + s) % 3], s, s % 5 + 1, count);
                ++combo;
              }
      }
  });
}
