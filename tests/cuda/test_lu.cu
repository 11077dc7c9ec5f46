// GPU getrf, getrs, gesv, getri and inverse against the host reference. Every batch mixes
// regular matrices with exactly singular ones (a zero column), ones holding a NaN and ones
// scaled into the subnormal range; pivots and info must match exactly.
#include "support.cuh"

namespace {
using namespace tbc;

template <class T, layout L>
void run_getrf(layout_c<L> l, int m, int n, index_t count) {
  INFO("getrf " << name(L) << " m=" << m << " n=" << n << " count=" << count);
  tbatch<T> A(m, n, count);
  fill_general(A);
  tpivots ipiv(std::min(m, n), count);
  auto info = tints::info(count);
  A.upload(), ipiv.upload(), info.upload();
  tb::getrf(host_ref, A.hview(l), ipiv.hview(l), info.hspan());
  tb::getrf(tb::cuda::policy<>{}, A.dview(l), ipiv.dview(l), info.dspan());
  check_all(arg(A, "A"), arg(ipiv, "ipiv"), arg(info, "info"));
}

/// LU factors made on the host, then solved on both sides.
template <class T, layout L>
void run_getrs(layout_c<L> l, tb::op t, bool with_info, int n, int nrhs, index_t count) {
  INFO("getrs " << name(L) << " " << name(t) << (with_info ? " with info" : " without info")
                << " n=" << n << " nrhs=" << nrhs << " count=" << count);
  tbatch<T> A(n, n, count), B(n, nrhs, count);
  fill_general(A);
  fill_rhs(B);
  tpivots ipiv(n, count);
  auto info = tints::info(count);
  tb::getrf(host_ref, A.hview(l), ipiv.hview(l), info.hspan());
  A.upload(), B.upload(), ipiv.upload(), info.upload();
  if (with_info) {
    tb::getrs(host_ref, t, A.hview(l), ipiv.hview(l), B.hview(l),
              std::span<const int>(info.hspan()));
    tb::getrs(tb::cuda::policy<>{}, t, A.dview(l), ipiv.dview(l), B.dview(l),
              std::span<const int>(info.dspan()));
  } else {
    tb::getrs(host_ref, t, A.hview(l), ipiv.hview(l), B.hview(l));
    tb::getrs(tb::cuda::policy<>{}, t, A.dview(l), ipiv.dview(l), B.dview(l));
  }
  check_all(arg(A, "A"), arg(B, "B"), arg(ipiv, "ipiv"), arg(info, "info"));
}

template <class T, layout L>
void run_gesv(layout_c<L> l, int n, int nrhs, index_t count) {
  INFO("gesv " << name(L) << " n=" << n << " nrhs=" << nrhs << " count=" << count);
  tbatch<T> A(n, n, count), B(n, nrhs, count);
  fill_general(A);
  fill_rhs(B);
  tpivots ipiv(n, count);
  auto info = tints::info(count);
  A.upload(), B.upload(), ipiv.upload(), info.upload();
  tb::gesv(host_ref, A.hview(l), ipiv.hview(l), B.hview(l), info.hspan());
  tb::gesv(tb::cuda::policy<>{}, A.dview(l), ipiv.dview(l), B.dview(l), info.dspan());
  check_all(arg(A, "A"), arg(B, "B"), arg(ipiv, "ipiv"), arg(info, "info"));
}

/// getri from host LU factors; its info (zero U(j, j)) poisoned before the call.
template <class T, layout L>
void run_getri(layout_c<L> l, int n, index_t count) {
  INFO("getri " << name(L) << " n=" << n << " count=" << count);
  tbatch<T> A(n, n, count);
  fill_general(A);
  tpivots ipiv(n, count);
  auto info = tints::info(count);
  tb::getrf(host_ref, A.hview(l), ipiv.hview(l), info.hspan());
  info = tints::info(count);
  A.upload(), ipiv.upload(), info.upload();
  tb::getri(host_ref, A.hview(l), ipiv.hview(l), info.hspan());
  tb::getri(tb::cuda::policy<>{}, A.dview(l), ipiv.dview(l), info.dspan());
  check_all(arg(A, "A"), arg(ipiv, "ipiv"), arg(info, "info"));
}

template <class T, layout L>
void run_inverse(layout_c<L> l, int n, index_t count) {
  INFO("inverse " << name(L) << " n=" << n << " count=" << count);
  tbatch<T> A(n, n, count), X(n, n, count);  // X stays poison until inverse writes it
  fill_general(A);
  auto info = tints::info(count);
  A.upload(), X.upload(), info.upload();
  tb::inverse(host_ref, A.hview(l), X.hview(l), info.hspan());
  tb::inverse(tb::cuda::policy<>{}, A.dview(l), X.dview(l), info.dspan());
  check_all(arg(A, "A"), arg(X, "X"), arg(info, "info"));
}

}  // namespace

TEMPLATE_TEST_CASE("cuda getrf, square and rectangular", "[getrf]", float, double) {
  for_layouts([](auto l) {
    for (int s : sizes())
      for (index_t count : counts()) {
        run_getrf<TestType>(l, s, s, count);
        run_getrf<TestType>(l, s + 3, s, count);  // tall
        run_getrf<TestType>(l, s, s + 2, count);  // wide
      }
  });
}

TEMPLATE_TEST_CASE("cuda getrs, every transpose, with and without info", "[getrs]", float, double) {
  for_layouts([](auto l) {
    for (tb::op t : {tb::op::no_trans, tb::op::trans, tb::op::conj_trans})
      for (bool with_info : {true, false})
        for (int n : sizes())
          for (index_t count : counts()) run_getrs<TestType>(l, t, with_info, n, n % 3 + 1, count);
  });
}

TEMPLATE_TEST_CASE("cuda gesv", "[gesv]", float, double) {
  for_layouts([](auto l) {
    for (int n : sizes())
      for (index_t count : counts()) run_gesv<TestType>(l, n, (n + 2) % 4 + 1, count);
  });
}

TEMPLATE_TEST_CASE("cuda getri", "[getri]", float, double) {
  for_layouts([](auto l) {
    for (int n : sizes())
      for (index_t count : counts()) run_getri<TestType>(l, n, count);
  });
}

TEMPLATE_TEST_CASE("cuda inverse", "[inverse]", float, double) {
  for_layouts([](auto l) {
    for (int n : sizes())
      for (index_t count : counts()) run_inverse<TestType>(l, n, count);
  });
}
