// GPU potrf, potrs and posv against the host reference. Every batch mixes symmetric
// positive definite matrices with not positive definite ones and ones holding a NaN; the
// triangle potrf must not touch is poison throughout.
#include "support.cuh"

namespace {
using namespace tbc;

const tb::uplo both_uplos[] = {tb::uplo::lower, tb::uplo::upper};

template <class T, layout L>
void run_potrf(layout_c<L> l, tb::uplo ul, int n, index_t count) {
  INFO("potrf " << name(L) << " " << name(ul) << " n=" << n << " count=" << count);
  tbatch<T> A(n, n, count);
  fill_spd(A, ul);
  auto info = tints::info(count);
  A.upload(), info.upload();
  tb::potrf(host_ref, ul, A.hview(l), info.hspan());
  tb::potrf(tb::cuda::policy<>{}, ul, A.dview(l), info.dspan());
  check_all(arg(A, "A"), arg(info, "info"));
}

/// A factored on the host (so both sides solve with the same factor), then solved on both.
template <class T, layout L>
void run_potrs(layout_c<L> l, tb::uplo ul, bool with_info, int n, int nrhs, index_t count) {
  INFO("potrs " << name(L) << " " << name(ul) << (with_info ? " with info" : " without info")
                << " n=" << n << " nrhs=" << nrhs << " count=" << count);
  tbatch<T> A(n, n, count), B(n, nrhs, count);
  fill_spd(A, ul);
  fill_rhs(B);
  auto info = tints::info(count);
  tb::potrf(host_ref, ul, A.hview(l), info.hspan());
  A.upload(), B.upload(), info.upload();
  if (with_info) {
    tb::potrs(host_ref, ul, A.hview(l), B.hview(l), std::span<const int>(info.hspan()));
    tb::potrs(tb::cuda::policy<>{}, ul, A.dview(l), B.dview(l), std::span<const int>(info.dspan()));
  } else {
    tb::potrs(host_ref, ul, A.hview(l), B.hview(l));
    tb::potrs(tb::cuda::policy<>{}, ul, A.dview(l), B.dview(l));
  }
  check_all(arg(A, "A"), arg(B, "B"), arg(info, "info"));
}

template <class T, layout L>
void run_posv(layout_c<L> l, tb::uplo ul, int n, int nrhs, index_t count) {
  INFO("posv " << name(L) << " " << name(ul) << " n=" << n << " nrhs=" << nrhs
               << " count=" << count);
  tbatch<T> A(n, n, count), B(n, nrhs, count);
  fill_spd(A, ul);
  fill_rhs(B);
  auto info = tints::info(count);
  A.upload(), B.upload(), info.upload();
  tb::posv(host_ref, ul, A.hview(l), B.hview(l), info.hspan());
  tb::posv(tb::cuda::policy<>{}, ul, A.dview(l), B.dview(l), info.dspan());
  check_all(arg(A, "A"), arg(B, "B"), arg(info, "info"));
}

}  // namespace

TEMPLATE_TEST_CASE("cuda potrf, lower and upper", "[potrf]", float, double) {
  for_layouts([](auto l) {
    for (tb::uplo ul : both_uplos)
      for (int n : sizes())
        for (index_t count : counts()) run_potrf<TestType>(l, ul, n, count);
  });
}

TEMPLATE_TEST_CASE("cuda potrs, with and without info", "[potrs]", float, double) {
  for_layouts([](auto l) {
    for (tb::uplo ul : both_uplos)
      for (bool with_info : {true, false})
        for (int n : sizes())
          for (index_t count : counts()) run_potrs<TestType>(l, ul, with_info, n, n % 4 + 1, count);
  });
}

TEMPLATE_TEST_CASE("cuda posv", "[posv]", float, double) {
  for_layouts([](auto l) {
    for (tb::uplo ul : both_uplos)
      for (int n : sizes())
        for (index_t count : counts()) run_posv<TestType>(l, ul, n, (n + 1) % 3 + 1, count);
  });
}
