// Device memory and copies, CUDA errors as exceptions, the other views (fixed extents,
// variable sizes, a shared input), non-default streams, and million-matrix batches.
#include "support.cuh"

#include <array>

namespace {
using namespace tbc;

// ---- cuda::copy -----------------------------------------------------------------------

/// A host buffer holding a batch in one of copy()'s four layouts, the rest poison.
struct copy_layout {
  const char* name;
  int ld_extra;          // ld = m + ld_extra
  index_t stride_extra;  // stride = ld * n + stride_extra
};
const copy_layout copy_layouts[] = {
    {"packed", 0, 0}, {"gaps", 0, 5}, {"padded ld", 2, 0}, {"padded ld and gaps", 3, 2}};

template <class T>
struct laid_out {
  int m, n, ld;
  index_t count, stride;
  std::vector<T> buf;
  laid_out(int m_, int n_, index_t count_, copy_layout l)
      : m(m_),
        n(n_),
        ld(m_ + l.ld_extra),
        count(count_),
        stride(index_t(ld) * n_ + l.stride_extra),
        buf(std::size_t(stride * count_), poison<T>()) {}
  tb::strided_view<T> view(T* base) const {
    return tb::strided_view<T>(base, m, n, count, ld, stride);
  }
  bool inside(std::size_t e) const {
    return int(index_t(e) % stride % ld) < m && index_t(e) % stride < index_t(ld) * n;
  }
};

}  // namespace

TEMPLATE_TEST_CASE("cuda::copy between host and device layouts keeps padding untouched", "[copy]",
                   float, double) {
  using T = TestType;
  const int m = 5, n = 3;
  for (index_t count : {index_t(1), index_t(7)})
    for (const auto& hl : copy_layouts)
      for (const auto& dl : copy_layouts) {
        INFO("host " << hl.name << ", device " << dl.name << ", count " << count);
        laid_out<T> src(m, n, count, hl), back(m, n, count, hl), dev(m, n, count, dl);
        for (std::size_t e = 0; e < src.buf.size(); ++e)
          if (src.inside(e)) src.buf[e] = uniform<T>();
        tb::cuda::device_array<T> d{std::span<const T>(dev.buf)};  // device side starts poisoned
        tb::cuda::copy(dev.view(d.data()), src.view(src.buf.data()));
        tb::cuda::copy(back.view(back.buf.data()), dev.view(d.data()));
        std::vector<T> dbuf(dev.buf.size());
        tb::cuda::copy(dbuf, d);
        device_sync();
        bool same = true, dev_padding = true;
        for (std::size_t e = 0; e < src.buf.size(); ++e)
          same = same && std::memcmp(&src.buf[e], &back.buf[e], sizeof(T)) == 0;
        for (std::size_t e = 0; e < dbuf.size(); ++e)
          if (!dev.inside(e)) dev_padding = dev_padding && is_poison(dbuf[e]);
        CHECK(same);
        CHECK(dev_padding);
      }
}

TEST_CASE("device_batch and device_array own device memory; copy checks sizes", "[copy]") {
  tb::batch<double, 4, 3> h(10);
  for (index_t k = 0; k < 10; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 4; ++i) h[k](i, j) = double(k * 100 + i + 10 * j);
  tb::cuda::device_batch<double, 4, 3> d(10);
  cudaPointerAttributes attr{};
  TINYBATCH_CUDA_CHECK(cudaPointerGetAttributes(&attr, d.data()));
  CHECK(attr.type == cudaMemoryTypeDevice);
  tb::cuda::copy(d, h);
  tb::batch<double, 4, 3> back(10);
  tb::cuda::copy(back, d);
  device_sync();
  CHECK(std::memcmp(back.data(), h.data(), sizeof(double) * 120) == 0);

  tb::cuda::device_batch<double> wrong(4, 3, 9);
  CHECK_THROWS_AS(tb::cuda::copy(wrong, h), tb::invalid_argument);
  tb::cuda::device_array<int> a(5);
  std::vector<int> v(6);
  CHECK_THROWS_AS(tb::cuda::copy(a, v), tb::invalid_argument);
  tb::cuda::device_array<int> moved = std::move(a);
  CHECK(a.data() == nullptr);
  CHECK(moved.size() == 5);
}

// ---- errors ---------------------------------------------------------------------------

namespace {
__global__ void empty_kernel() {}
}  // namespace

TEST_CASE("CUDA errors become tinybatch::cuda_error naming the call", "[errors]") {
  // An allocation no GPU can satisfy.
  try {
    tb::cuda::device_batch<double> huge(1 << 20, 1 << 20, 1000);
    FAIL("an 8 PB device allocation succeeded");
  } catch (const tb::cuda_error& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("cudaMalloc(&p, 8796093022208000)") != std::string::npos);
    CHECK(what.find("out of memory") != std::string::npos);
    CHECK(e.code() == int(cudaErrorMemoryAllocation));
  }
  // The failed call is reported once: the next launch does not report it again.
  CHECK(cudaPeekAtLastError() == cudaSuccess);
  tbatch<float> A(2, 2, 3), B(2, 2, 3), C(2, 2, 3);
  A.fill_random(), B.fill_random();
  A.upload(), B.upload(), C.upload();
  layout_c<layout::strided> l;
  CHECK_NOTHROW(tb::gemm(tb::cuda::policy<>{}, A.dview(l), B.dview(l), C.dview(l)));
  tb::gemm(host_ref, A.hview(l), B.hview(l), C.hview(l));
  check_all(arg(C, "C"));

  // A launch that fails names the kernel.
  empty_kernel<<<1, 4096>>>();  // more threads per block than any GPU has
  try {
    tb::cuda::check_launch("empty_kernel");
    FAIL("an impossible launch succeeded");
  } catch (const tb::cuda_error& e) {
    INFO(e.what());
    // (CUDA 13 calls a block larger than the GPU allows "invalid argument")
    CHECK(std::string(e.what()).find("launch of kernel empty_kernel failed: ") == 0);
  }
  CHECK_THROWS_AS(TINYBATCH_CUDA_CHECK(cudaSetDevice(-1)), tb::cuda_error);
  try {
    TINYBATCH_CUDA_CHECK(cudaMemset(nullptr, 0, 4));
  } catch (const tb::cuda_error& e) {
    CHECK(std::string(e.what()).find("cudaMemset(nullptr, 0, 4) failed: ") == 0);
  }
}

// ---- other views and policies ---------------------------------------------------------

TEMPLATE_TEST_CASE("fixed-extent views on the GPU", "[fixed]", float, double) {
  using T = TestType;
  const index_t count = small_grid() ? 37 : 1000;
  layout_c<layout::strided> s;
  layout_c<layout::pointers> p;
  {  // gemm 5x2 = (5x4)(4x2), fixed sizes, strided
    tbatch<T> A(5, 4, count), B(4, 2, count), C(5, 2, count);
    A.fill_random(), B.fill_random();
    A.upload(), B.upload(), C.upload();
    auto fixed = [](auto v, auto m, auto n) {
      return tb::strided_view<T, decltype(m)::value, decltype(n)::value>(v.data(), v.count(),
                                                                         v.ld(), v.stride());
    };
    using I2 = std::integral_constant<int, 2>;
    using I4 = std::integral_constant<int, 4>;
    using I5 = std::integral_constant<int, 5>;
    tb::gemm(host_ref, tb::no_trans, tb::no_trans, T(1), fixed(A.hview(s), I5{}, I4{}),
             fixed(B.hview(s), I4{}, I2{}), T(0), fixed(C.hview(s), I5{}, I2{}));
    tb::gemm(tb::cuda::policy<>{}, tb::no_trans, tb::no_trans, T(1), fixed(A.dview(s), I5{}, I4{}),
             fixed(B.dview(s), I4{}, I2{}), T(0), fixed(C.dview(s), I5{}, I2{}));
    check_all(arg(A, "A"), arg(B, "B"), arg(C, "C"));
  }
  {  // 4x4 getrf, getrs and inverse through pointer arrays, 3x3 potrf strided
    tbatch<T> A(4, 4, count), B(4, 4, count), X(4, 4, count);
    fill_general(A), fill_rhs(B);
    tpivots ipiv(4, count);
    auto info = tints::info(count), info2 = tints::info(count);
    A.upload(), B.upload(), X.upload(), ipiv.upload(), info.upload(), info2.upload();
    auto pv = [&](T* const* ptrs) { return tb::pointer_view<T, 4, 4>(ptrs, count, 7); };
    tb::inverse(host_ref, pv(A.hp.data()), pv(X.hp.data()), info2.hspan());
    // The generic kernels: the fast fused inverse (tested in test_fast.cu) rounds otherwise,
    // and turns an overflowing inverse into other infinities and NaNs than getri does.
    tb::inverse(tb::cuda::policy<tb::kernels::reference>{}, pv(A.dp.data()), pv(X.dp.data()),
                info2.dspan());
    tb::getrf(host_ref, pv(A.hp.data()), ipiv.hview(p), info.hspan());
    tb::getrf(tb::cuda::policy<>{}, pv(A.dp.data()), ipiv.dview(p), info.dspan());
    tb::getrs(host_ref, tb::trans, pv(A.hp.data()), ipiv.hview(p), pv(B.hp.data()),
              std::span<const int>(info.hspan()));
    // The generic kernel again: the fast solve (every n since the direct kernel; tested in
    // test_fast.cu against LAPACK's residual ratio) multiplies by reciprocals, and on an
    // ill-conditioned random matrix its solution can overflow where the reference's does not
    // (seen: host 2.2e38, GPU inf, float).
    tb::getrs(tb::cuda::policy<tb::kernels::reference>{}, tb::trans, pv(A.dp.data()), ipiv.dview(p),
              pv(B.dp.data()), std::span<const int>(info.dspan()));
    check_all(arg(A, "A"), arg(B, "B"), arg(X, "X"), arg(ipiv, "ipiv"), arg(info, "info"),
              arg(info2, "inverse info"));

    tbatch<T> S(3, 3, count);
    fill_spd(S, tb::uplo::upper);
    auto sinfo = tints::info(count);
    S.upload(), sinfo.upload();
    auto sv = [&](T* base) { return tb::strided_view<T, 3, 3>(base, count, S.ld, S.stride); };
    tb::potrf(host_ref, tb::upper, sv(S.h.data()), sinfo.hspan());
    tb::potrf(tb::cuda::policy<>{}, tb::upper, sv(S.d.data()), sinfo.dspan());
    check_all(arg(S, "S"), arg(sinfo, "info"));
  }
}

TEMPLATE_TEST_CASE("variable-size batches on the GPU", "[vbatch]", float, double) {
  using T = TestType;
  const index_t count = small_grid() ? 40 : 500;
  // Matrix k is n_k x n_k, n_k = 1 + k % 9, each with ld = n_k + 1, in one padded buffer.
  std::vector<int> ns(count), lds(count);
  std::vector<index_t> off(count);
  index_t total = 0;
  for (index_t k = 0; k < count; ++k) {
    ns[k] = 1 + int(k % 9), lds[k] = ns[k] + 1, off[k] = total;
    total += index_t(lds[k]) * ns[k] + 1;
  }
  std::vector<T> a(std::size_t(total), poison<T>()), x(std::size_t(total), poison<T>());
  for (index_t k = 0; k < count; ++k)
    for (int j = 0; j < ns[k]; ++j)
      for (int i = 0; i < ns[k]; ++i)
        a[off[k] + i + j * lds[k]] = singular_k(k) && j == 0 ? T(0) : uniform<T>();
  const int pstride = 9;
  std::vector<int> ipiv(std::size_t(count * pstride), ipoison), info(count, ipoison),
      info2(count, ipoison);

  tb::cuda::device_array<T> da{std::span<const T>(a)}, dx{std::span<const T>(x)};
  tb::cuda::device_array<int> dn{std::span<const int>(ns)}, dld{std::span<const int>(lds)};
  tb::cuda::device_array<int> dpiv{std::span<const int>(ipiv)}, dinfo{std::span<const int>(info)},
      dinfo2{std::span<const int>(info2)};
  std::vector<T*> ha(count), hx(count), pa(count), px(count);
  for (index_t k = 0; k < count; ++k)
    ha[k] = a.data() + off[k], hx[k] = x.data() + off[k], pa[k] = da.data() + off[k],
    px[k] = dx.data() + off[k];
  tb::cuda::device_array<T*> dpa{std::span<T*const>(pa)}, dpx{std::span<T*const>(px)};

  tb::vbatch_view<T> hA(ha.data(), ns.data(), ns.data(), lds.data(), count),
      hX(hx.data(), ns.data(), ns.data(), lds.data(), count);
  tb::vbatch_view<T> dA(dpa.data(), dn.data(), dn.data(), dld.data(), count),
      dX(dpx.data(), dn.data(), dn.data(), dld.data(), count);
  // inverse sizes its scratch by the largest n (read from device memory), then getrf + getri.
  tb::inverse(host_ref, hA, hX, info2);
  tb::inverse(tb::cuda::policy<>{}, dA, dX, dinfo2);
  tb::getrf(host_ref, hA, tb::pivot_view(ipiv.data(), index_t(ipiv.size()), pstride), info);
  tb::getrf(tb::cuda::policy<>{}, dA, tb::pivot_view(dpiv.data(), index_t(dpiv.size()), pstride),
            dinfo);
  tb::getri(host_ref, hA, tb::pivot_view(ipiv.data(), index_t(ipiv.size()), pstride), info);
  tb::getri(tb::cuda::policy<>{}, dA, tb::pivot_view(dpiv.data(), index_t(dpiv.size()), pstride),
            dinfo);

  std::vector<T> ga(a.size()), gx(x.size());
  std::vector<int> gpiv(ipiv.size()), ginfo(info.size()), ginfo2(info2.size());
  tb::cuda::copy(ga, da), tb::cuda::copy(gx, dx), tb::cuda::copy(gpiv, dpiv),
      tb::cuda::copy(ginfo, dinfo), tb::cuda::copy(ginfo2, dinfo2);
  device_sync();
  CHECK(gpiv == ipiv);
  CHECK(ginfo == info);
  CHECK(ginfo2 == info2);
  auto same = [](const std::vector<T>& h, const std::vector<T>& g) {
    for (std::size_t e = 0; e < h.size(); ++e) {
      if (is_poison(h[e]) != is_poison(g[e])) return false;
      if (std::isnan(h[e]) || std::isnan(g[e])) {
        if (std::isnan(h[e]) != std::isnan(g[e])) return false;
      } else if (std::abs(h[e] - g[e]) > 1e-3 * std::max(T(1), std::abs(h[e]))) {
        return false;
      }
    }
    return true;
  };
  CHECK(same(a, ga));
  CHECK(same(x, gx));
}

TEMPLATE_TEST_CASE("a non-default stream, kernels::reference, a shared input matrix", "[stream]",
                   float, double) {
  using T = TestType;
  const index_t count = small_grid() ? 37 : 1000;
  const int n = 6;
  cudaStream_t stream;
  TINYBATCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  layout_c<layout::strided> l;
  tbatch<T> A(n, n, count), X(n, n, count), B(n, 2, count), C(n, 2, count);
  fill_general(A), fill_rhs(B);
  tpivots ipiv(n, count);
  auto info = tints::info(count), info2 = tints::info(count);
  A.upload(), X.upload(), B.upload(), C.upload(), ipiv.upload(), info.upload(), info2.upload();
  // inverse (scratch from the stream's pool) and gesv, on the non-blocking stream.
  tb::inverse(host_ref, A.hview(l), X.hview(l), info2.hspan());
  tb::inverse(tb::cuda::on(stream), A.dview(l), X.dview(l), info2.dspan());
  // C := A[0] B for every matrix: the first matrix of A shared by all (stride 0).
  auto shared = [&](T* base) { return tb::strided_view<T>(base, n, n, count, A.ld, 0); };
  tb::gemm(host_ref, shared(A.h.data()), B.hview(l), C.hview(l));
  tb::gemm(tb::cuda::policy<tb::kernels::reference>{stream}, shared(A.d.data()), B.dview(l),
           C.dview(l));
  tb::gesv(host_ref, A.hview(l), ipiv.hview(l), B.hview(l), info.hspan());
  tb::gesv(tb::cuda::on(stream), A.dview(l), ipiv.dview(l), B.dview(l), info.dspan());
  TINYBATCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  check_all(arg(A, "A"), arg(X, "X"), arg(B, "B"), arg(C, "C"), arg(ipiv, "ipiv"),
            arg(info, "info"), arg(info2, "inverse info"));
  TINYBATCH_CUDA_CHECK(cudaStreamDestroy(stream));
}

// ---- the reciprocal of the row kernels' pivot steps (cuda/kernels/common.cuh rcp_fast) ----

/// Counts, over n inputs, those in rcp_fast_range (checked[0]) and those where rcp_fast or
/// rcp_rn differ from the correctly rounded reciprocal in any bit (bad[0], bad[1]). Floats:
/// the bit patterns i * step; doubles: pseudo-random bit patterns (splitmix64 of i).
template <class T>
__global__ void rcp_check_kernel(unsigned long long n, unsigned long long step, unsigned long long* checked,
                                 unsigned long long* bad) {
  namespace fk = tb::cuda::fast_kernels;
  unsigned long long c = 0, b0 = 0, b1 = 0;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x) {
    T d;
    if constexpr (sizeof(T) == 4) {
      d = __uint_as_float(unsigned(i * step));
    } else {
      unsigned long long z = (i + 1) * 0x9e3779b97f4a7c15ull;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      d = __longlong_as_double((long long)(z ^ (z >> 31)));
    }
    const auto bits = [](T x) -> unsigned long long {
      if constexpr (sizeof(T) == 4)
        return __float_as_uint(x);
      else
        return (unsigned long long)__double_as_longlong(x);
    };
    T want;
    if constexpr (sizeof(T) == 4)
      want = __frcp_rn(d);
    else
      want = __drcp_rn(d);
    const auto same = [&](T x) { return want != want ? x != x : bits(x) == bits(want); };  // or both NaN
    if (fk::rcp_fast_range(d)) {
      ++c;
      b0 += !same(fk::rcp_fast(d));
    }
    b1 += !same(fk::rcp_rn(d));
  }
  atomicAdd(checked, c), atomicAdd(bad, b0), atomicAdd(bad + 1, b1);
}

TEMPLATE_TEST_CASE("the fast reciprocal of getrf and the inverse is the correctly rounded one",
                   "[rcp]", float, double) {
  using T = TestType;
  // Floats: every bit pattern (every 4099th under the sanitizers); doubles: 2^30 random ones.
  const unsigned long long n = sizeof(T) == 4 ? (small_grid() ? (1ull << 32) / 4099 : 1ull << 32)
                                              : (small_grid() ? 1ull << 20 : 1ull << 30);
  const unsigned long long step = sizeof(T) == 4 && small_grid() ? 4099 : 1;
  tb::cuda::device_array<unsigned long long> counts(3);
  TINYBATCH_CUDA_CHECK(cudaMemset(counts.data(), 0, 3 * sizeof(unsigned long long)));
  rcp_check_kernel<T><<<4096, 256>>>(n, step, counts.data(), counts.data() + 1);
  TINYBATCH_CUDA_CHECK(cudaGetLastError());
  std::vector<unsigned long long> h(3);
  tb::cuda::copy(h, counts);
  INFO("inputs " << n << ", in the fast range " << h[0]);
  CHECK(h[0] > n / 2);  // most finite inputs take the fast path
  CHECK(h[1] == 0);     // rcp_fast differs from the correctly rounded reciprocal
  CHECK(h[2] == 0);     // rcp_rn differs from it
}

TEMPLATE_TEST_CASE("a million matrices", "[large]", float, double) {
  using T = TestType;
  if (small_grid()) return;
  const index_t count = 1000000;
  layout_c<layout::strided> l;
  {  // gesv 4x4 with packed pivots in a device_array (pivot_view's default stride)
    tbatch<T> A(4, 4, count), B(4, 1, count);
    fill_general(A), fill_rhs(B);
    std::vector<int> ipiv(std::size_t(count) * 4, ipoison);
    auto info = tints::info(count);
    A.upload(), B.upload(), info.upload();
    tb::cuda::device_array<int> dpiv{std::span<const int>(ipiv)};
    tb::gesv(host_ref, A.hview(l), ipiv, B.hview(l), info.hspan());
    tb::gesv(tb::cuda::policy<>{}, A.dview(l), dpiv, B.dview(l), info.dspan());
    std::vector<int> gpiv(ipiv.size());
    tb::cuda::copy(gpiv, dpiv);
    check_all(arg(A, "A"), arg(B, "B"), arg(info, "info"));
    CHECK(gpiv == ipiv);
  }
  {  // gemm 3x3 with transposes
    tbatch<T> A(3, 3, count), B(3, 3, count), C(3, 3, count);
    A.fill_random(), B.fill_random(), C.fill_random();
    A.upload(), B.upload(), C.upload();
    tb::gemm(host_ref, tb::trans, tb::no_trans, T(2), A.hview(l), B.hview(l), T(-1), C.hview(l));
    tb::gemm(tb::cuda::policy<>{}, tb::trans, tb::no_trans, T(2), A.dview(l), B.dview(l), T(-1),
             C.dview(l));
    check_all(arg(A, "A"), arg(B, "B"), arg(C, "C"));
  }
}
