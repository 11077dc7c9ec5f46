// tinybatch's CUDA kernels against cuBLAS / cuSOLVER on the same data, in one run:
//   gemm     vs cublas<t>gemmStridedBatched (beta = 0); from the crossover in tuning.hpp on,
//            tinybatch calls that very routine, and tinybatch_fast is its own kernel
//   getrf    vs cublas<t>getrfBatched
//   inverse  vs cublas<t>matinvBatched and cublas<t>getrfBatched + cublas<t>getriBatched
//   potrf    vs cusolverDn<t>potrfBatched (lower)
//   getrs    vs cublas<t>getrsBatched (one right-hand side, no_trans)
//   potrs    vs cusolverDn<t>potrsBatched (one right-hand side, lower; cuSOLVER takes no more)
// (getrs and potrs also run tinybatch's generic one-thread-per-matrix kernel: tinybatch_generic)
// n in {2, 3, 4, 5, 8, 12, 16, 20, 24, 32}, float and double, `--gib` GiB per operand
// (default 1). Times: CUDA events around the call alone, median of --reps (default 7) after
// --warmup-ms (default 100) of warm-up runs (timing.hpp); in-place routines get their input
// restored by a device copy before each run, outside the timed interval. Roofline = bytes (each input read once, each output written
// once) / the device-to-device copy bandwidth measured at the start of the same run.
//
//   bench_gpu [--gib 1] [--reps 7] [--warmup-ms 100] [--csv file] [--commit id] [--ops gemm,getrf,...]
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include <tinybatch/cuda.hpp>

#include "timing.hpp"

namespace tb = tinybatch;
using tb::index_t;

#define CK(x) tb::cuda::check((x), #x)
#define CB(x) tb::cuda::check((x), #x)

namespace {

struct options {
  double gib = 1.0;
  int reps = 7;
  double warmup_ms = 100;
  std::string csv = "bench_gpu.csv", commit = "unknown", ops = "gemm,getrf,inverse,potrf,getrs,potrs";
  bool has(const char* op) const { return ("," + ops + ",").find("," + std::string(op) + ",") != std::string::npos; }
};

struct row {
  std::string op, impl, prec;
  int n;
  index_t batch;
  double ms, gflops, gbs, frac;
};
std::vector<row> rows;
double bw_gbs = 0;  // measured D2D, GB/s counting read + write

cudaEvent_t ev0, ev1;

/// Median time in ms of `run` over reps after o.warmup_ms of warm-up (timing.hpp); `restore`
/// runs before each, untimed.
double time_ms(const options& o, const std::function<void()>& run,
               const std::function<void()>& restore = {}) {
  return tb_bench::median_ms(ev0, ev1, o.reps, o.warmup_ms, run, restore);
}

void record(const char* op, const char* impl, const char* prec, int n, index_t batch, double ms,
            double flops_per, double bytes) {
  row r{op, impl, prec, n, batch, ms, flops_per * double(batch) / (ms * 1e6), bytes / (ms * 1e6),
        0};
  r.frac = r.gbs / bw_gbs;
  rows.push_back(r);
  std::printf("%-8s %-22s %s n=%2d batch=%9lld %9.4f ms %9.1f GFLOP/s %7.1f GB/s roofline %.3f\n",
              op, impl, prec, n, (long long)batch, ms, r.gflops, r.gbs, r.frac);
  std::fflush(stdout);
}

// ---- device data ----------------------------------------------------------------------------

template <class T>
__global__ void fill_kernel(T* a, index_t count, int n, unsigned seed, int spd) {
  const index_t total = count * n * n;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += index_t(gridDim.x) * blockDim.x) {
    const index_t k = e / (n * n);
    const int w = int(e - k * n * n), j = w / n, i = w - j * n;
    // symmetric hash for SPD matrices: depends on (min, max)
    const int lo = spd ? min(i, j) : i, hi = spd ? max(i, j) : j;
    unsigned long long h = (unsigned long long)(k * 1315423911ull) ^ (lo * 2654435761ull) ^
                           (hi * 97531ull) ^ seed;
    h ^= h >> 33, h *= 0xff51afd7ed558ccdull, h ^= h >> 33, h *= 0xc4ceb9fe1a85ec53ull, h ^= h >> 33;
    T v = T(double(h >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
    if (spd && i == j) v = T(n) + T(1);  // diagonally dominant: SPD
    a[e] = v;
  }
}
template <class T>
void fill(T* a, index_t count, int n, unsigned seed, bool spd) {
  fill_kernel<<<4096, 256>>>(a, count, n, seed, spd ? 1 : 0);
  CK(cudaGetLastError());
}

template <class T>
__global__ void ptr_kernel(T** p, T* base, index_t count, index_t stride) {
  for (index_t k = index_t(blockIdx.x) * blockDim.x + threadIdx.x; k < count;
       k += index_t(gridDim.x) * blockDim.x)
    p[k] = base + k * stride;
}
template <class T>
T** pointers(T* base, index_t count, index_t stride) {
  T** p;
  CK(cudaMalloc(&p, sizeof(T*) * count));
  ptr_kernel<<<4096, 256>>>(p, base, count, stride);
  CK(cudaGetLastError());
  return p;
}

// ---- cuBLAS / cuSOLVER by type --------------------------------------------------------------

cublasStatus_t gemm_sb(cublasHandle_t h, int n, const float* a, const float* b, float* c, int batch) {
  const float one = 1, zero = 0;
  return cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, (long long)n * n,
                                   b, n, (long long)n * n, &zero, c, n, (long long)n * n, batch);
}
cublasStatus_t gemm_sb(cublasHandle_t h, int n, const double* a, const double* b, double* c, int batch) {
  const double one = 1, zero = 0;
  return cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, (long long)n * n,
                                   b, n, (long long)n * n, &zero, c, n, (long long)n * n, batch);
}
cublasStatus_t getrf_b(cublasHandle_t h, int n, float** a, int* piv, int* info, int batch) {
  return cublasSgetrfBatched(h, n, a, n, piv, info, batch);
}
cublasStatus_t getrf_b(cublasHandle_t h, int n, double** a, int* piv, int* info, int batch) {
  return cublasDgetrfBatched(h, n, a, n, piv, info, batch);
}
cublasStatus_t getri_b(cublasHandle_t h, int n, float** a, int* piv, float** c, int* info, int batch) {
  return cublasSgetriBatched(h, n, a, n, piv, c, n, info, batch);
}
cublasStatus_t getri_b(cublasHandle_t h, int n, double** a, int* piv, double** c, int* info, int batch) {
  return cublasDgetriBatched(h, n, a, n, piv, c, n, info, batch);
}
cublasStatus_t matinv_b(cublasHandle_t h, int n, float** a, float** c, int* info, int batch) {
  return cublasSmatinvBatched(h, n, a, n, c, n, info, batch);
}
cublasStatus_t matinv_b(cublasHandle_t h, int n, double** a, double** c, int* info, int batch) {
  return cublasDmatinvBatched(h, n, a, n, c, n, info, batch);
}
cublasStatus_t getrs_b(cublasHandle_t h, int n, float** a, int* piv, float** b, int* info, int batch) {
  return cublasSgetrsBatched(h, CUBLAS_OP_N, n, 1, a, n, piv, b, n, info, batch);
}
cublasStatus_t getrs_b(cublasHandle_t h, int n, double** a, int* piv, double** b, int* info, int batch) {
  return cublasDgetrsBatched(h, CUBLAS_OP_N, n, 1, a, n, piv, b, n, info, batch);
}
cusolverStatus_t potrf_b(cusolverDnHandle_t h, int n, float** a, int* info, int batch) {
  return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, batch);
}
cusolverStatus_t potrf_b(cusolverDnHandle_t h, int n, double** a, int* info, int batch) {
  return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, batch);
}

cusolverStatus_t potrs_b(cusolverDnHandle_t h, int n, float** a, float** b, int* info, int batch) {
  return cusolverDnSpotrsBatched(h, CUBLAS_FILL_MODE_LOWER, n, 1, a, n, b, n, info, batch);
}
cusolverStatus_t potrs_b(cusolverDnHandle_t h, int n, double** a, double** b, int* info, int batch) {
  return cusolverDnDpotrsBatched(h, CUBLAS_FILL_MODE_LOWER, n, 1, a, n, b, n, info, batch);
}

cublasHandle_t cublas;
cusolverDnHandle_t cusolver;

// ---- one (type, n) ------------------------------------------------------------------------------

template <class T, int N>
void bench_n(const options& o) {
  const char* prec = sizeof(T) == 4 ? "s" : "d";
  const index_t mat = index_t(N) * N;
  index_t batch = index_t(o.gib * double(1ull << 30) / double(mat * sizeof(T)));
  batch = std::min<index_t>(batch, 2147483647 / 4);
  const double mb = double(mat * sizeof(T)) * batch;  // bytes of one operand
  const int ib = int(batch);
  T *A, *A0, *B, *C;
  int *piv, *info;
  CK(cudaMalloc(&A, mat * sizeof(T) * batch));
  CK(cudaMalloc(&A0, mat * sizeof(T) * batch));
  CK(cudaMalloc(&B, mat * sizeof(T) * batch));
  CK(cudaMalloc(&C, mat * sizeof(T) * batch));
  CK(cudaMalloc(&piv, sizeof(int) * N * batch));
  CK(cudaMalloc(&info, sizeof(int) * batch));
  T** Ap = pointers(A, batch, mat);
  T** Cp = pointers(C, batch, mat);
  T** Bp = pointers(B, batch, mat);
  std::span<int> inf(info, std::size_t(batch));
  tb::pivot_view pv(piv, index_t(N) * batch, N);
  tb::strided_view<T, N, N> vA(A, batch), vB(B, batch), vC(C, batch);
  tb::strided_view<T, N, 1> vb(B, batch, N, N);
  tb::cuda::policy<> pol{};
  tb::cuda::policy<tb::kernels::reference> generic{};  // one thread per matrix (the solves' crossover)
  const auto restore = [&] { CK(cudaMemcpyAsync(A, A0, mat * sizeof(T) * batch, cudaMemcpyDeviceToDevice)); };
  const double n3 = double(N) * N * N, ints = 4.0 * batch;

  if (o.has("gemm")) {
    fill(A, batch, N, 1, false), fill(B, batch, N, 2, false);
    double ms = time_ms(o, [&] { tb::gemm(pol, vA, vB, vC); });
    record("gemm", "tinybatch", prec, N, batch, ms, 2 * n3, 3 * mb);
    if (N >= tb::cuda::fast_kernels::gemm_vendor_min_n(int(sizeof(T)))) {  // tinybatch is cuBLAS here
      ms = time_ms(o, [&] {
        tb::cuda::fast::gemm(cudaStream_t{}, tb::op::no_trans, tb::op::no_trans, T(1), vA, vB, T(0), vC);
      });
      record("gemm", "tinybatch_fast", prec, N, batch, ms, 2 * n3, 3 * mb);
    }
    ms = time_ms(o, [&] { CB(gemm_sb(cublas, N, A, B, C, ib)); });
    record("gemm", "cublas_gemm_strided", prec, N, batch, ms, 2 * n3, 3 * mb);
  }
  const double lu_flops = 2.0 / 3 * n3 - 0.5 * N * N + 5.0 / 6 * N;
  if (o.has("getrf") || o.has("inverse") || o.has("getrs")) {
    fill(A0, batch, N, 3, false);
    restore();
  }
  if (o.has("getrf")) {
    const double bytes = 2 * mb + ints * N + ints;
    double ms = time_ms(o, [&] { tb::getrf(pol, vA, pv, inf); }, restore);
    record("getrf", "tinybatch", prec, N, batch, ms, lu_flops, bytes);
    ms = time_ms(o, [&] { CB(getrf_b(cublas, N, Ap, piv, info, ib)); }, restore);
    record("getrf", "cublas_getrf", prec, N, batch, ms, lu_flops, bytes);
  }
  if (o.has("inverse")) {
    const double bytes = 2 * mb + ints;
    restore();
    double ms = time_ms(o, [&] { tb::inverse(pol, tb::strided_view<const T, N, N>(A, batch), vC, inf); });
    record("inverse", "tinybatch", prec, N, batch, ms, 2 * n3, bytes);
    ms = time_ms(o, [&] { CB(matinv_b(cublas, N, Ap, Cp, info, ib)); });
    record("inverse", "cublas_matinv", prec, N, batch, ms, 2 * n3, bytes);
    // getrf + getri: restore, factor (timed), invert (timed)
    ms = time_ms(o, [&] {
      CB(getrf_b(cublas, N, Ap, piv, info, ib));
      CB(getri_b(cublas, N, Ap, piv, Cp, info, ib));
    }, restore);
    record("inverse", "cublas_getrf+getri", prec, N, batch, ms, 2 * n3, bytes);
    restore();
    CB(getrf_b(cublas, N, Ap, piv, info, ib));
    ms = time_ms(o, [&] { CB(getri_b(cublas, N, Ap, piv, Cp, info, ib)); });
    record("getri", "cublas_getri", prec, N, batch, ms, 4.0 / 3 * n3, 2 * mb + ints * N + ints);
  }
  if (o.has("getrs")) {
    // LU factors from cuBLAS, then one right-hand side per matrix (restored between runs).
    restore();
    CB(getrf_b(cublas, N, Ap, piv, info, ib));
    T* B0;
    CK(cudaMalloc(&B0, sizeof(T) * N * batch));
    fill(B0, batch * N, 1, 4, false);  // batch * N values (as "1 x 1 matrices")
    T** bp = pointers(B, batch, N);
    const auto rb = [&] { CK(cudaMemcpyAsync(B, B0, sizeof(T) * N * batch, cudaMemcpyDeviceToDevice)); };
    const double bytes = mb + ints * N + 2.0 * sizeof(T) * N * batch;
    const double fl = 2.0 * N * N;
    double ms = time_ms(o, [&] { tb::getrs(pol, tb::no_trans, vA, pv, vb); }, rb);
    record("getrs", "tinybatch", prec, N, batch, ms, fl, bytes);
    ms = time_ms(o, [&] { tb::getrs(generic, tb::no_trans, vA, pv, vb); }, rb);
    record("getrs", "tinybatch_generic", prec, N, batch, ms, fl, bytes);
    int hinfo = 0;
    ms = time_ms(o, [&] { CB(getrs_b(cublas, N, Ap, piv, bp, &hinfo, ib)); }, rb);
    record("getrs", "cublas_getrs", prec, N, batch, ms, fl, bytes);
    CK(cudaFree(bp));
    CK(cudaFree(B0));
  }
  if (o.has("potrf") || o.has("potrs")) {
    fill(A0, batch, N, 5, true);
    const double bytes = 2 * mb + ints, fl = n3 / 3;
    if (o.has("potrf")) {
      double ms = time_ms(o, [&] { tb::potrf(pol, tb::uplo::lower, vA, inf); }, restore);
      record("potrf", "tinybatch", prec, N, batch, ms, fl, bytes);
    }
    const auto cusolver_potrf = [&] { tb::cuda::check(potrf_b(cusolver, N, Ap, info, ib), "cusolverDnXpotrfBatched"); };
    if (o.has("potrf")) {
      double ms = time_ms(o, cusolver_potrf, restore);
      record("potrf", "cusolver_potrf_batched", prec, N, batch, ms, fl, bytes);
    } else {
      restore();
      cusolver_potrf();
    }
  }
  if (o.has("potrs")) {
    // cuSOLVER's Cholesky factors (lower) in A, then one right-hand side (restored between
    // runs). Bytes: the whole factor (as potrf counts it), B read and written.
    T* B0;
    CK(cudaMalloc(&B0, sizeof(T) * N * batch));
    fill(B0, batch * N, 1, 6, false);
    T** bp = pointers(B, batch, N);
    const auto rb = [&] { CK(cudaMemcpyAsync(B, B0, sizeof(T) * N * batch, cudaMemcpyDeviceToDevice)); };
    const double bytes = mb + 2.0 * sizeof(T) * N * batch, fl = 2.0 * N * N;
    double ms = time_ms(o, [&] { tb::potrs(pol, tb::uplo::lower, vA, vb); }, rb);
    record("potrs", "tinybatch", prec, N, batch, ms, fl, bytes);
    ms = time_ms(o, [&] { tb::potrs(generic, tb::uplo::lower, vA, vb); }, rb);
    record("potrs", "tinybatch_generic", prec, N, batch, ms, fl, bytes);
    ms = time_ms(o, [&] { tb::cuda::check(potrs_b(cusolver, N, Ap, bp, info, ib), "cusolverDnXpotrsBatched"); }, rb);
    record("potrs", "cusolver_potrs_batched", prec, N, batch, ms, fl, bytes);
    CK(cudaFree(bp));
    CK(cudaFree(B0));
  }
  CK(cudaDeviceSynchronize());
  for (void* p : {(void*)A, (void*)A0, (void*)B, (void*)C, (void*)piv, (void*)info, (void*)Ap, (void*)Bp, (void*)Cp})
    CK(cudaFree(p));
}

template <class T>
void bench_type(const options& o) {
#ifdef TB_BENCH_QUICK  // compile checks
  bench_n<T, 3>(o);
  return;
#endif
  bench_n<T, 2>(o), bench_n<T, 3>(o), bench_n<T, 4>(o), bench_n<T, 5>(o), bench_n<T, 8>(o);
  bench_n<T, 12>(o), bench_n<T, 16>(o), bench_n<T, 20>(o), bench_n<T, 24>(o), bench_n<T, 32>(o);
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--gib") o.gib = std::atof(argv[i + 1]);
    else if (a == "--reps") o.reps = std::atoi(argv[i + 1]);
    else if (a == "--warmup-ms") o.warmup_ms = std::atof(argv[i + 1]);
    else if (a == "--csv") o.csv = argv[i + 1];
    else if (a == "--commit") o.commit = argv[i + 1];
    else if (a == "--ops") o.ops = argv[i + 1];
    else { std::fprintf(stderr, "unknown option %s\n", a.c_str()); return 2; }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  CK(cudaEventCreate(&ev0));
  CK(cudaEventCreate(&ev1));
  CB(cublasCreate(&cublas));
  tb::cuda::check(cusolverDnCreate(&cusolver), "cusolverDnCreate");
  {  // D2D bandwidth: 1 GiB copies (or --gib), median
    const std::size_t bytes = std::size_t(o.gib * double(1ull << 30));
    void *x, *y;
    CK(cudaMalloc(&x, bytes));
    CK(cudaMalloc(&y, bytes));
    CK(cudaMemset(x, 1, bytes));
    const double ms = time_ms(o, [&] { CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice)); });
    bw_gbs = 2.0 * double(bytes) / (ms * 1e6);
    CK(cudaFree(x));
    CK(cudaFree(y));
  }
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::printf("# device %s, %d SMs, L2 %d MB; d2d bandwidth %.0f GB/s (read+write); %.2f GiB per operand; commit %s; %s\n",
              prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, bw_gbs, o.gib,
              o.commit.c_str(), date);
  bench_type<float>(o);
  bench_type<double>(o);
  if (FILE* f = std::fopen(o.csv.c_str(), "w")) {
    std::fprintf(f, "# device %s, %d SMs, L2 %d MB\n# d2d bandwidth %.0f GB/s (read+write)\n",
                 prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, bw_gbs);
    std::fprintf(f, "# date %s\n# commit %s\n# %.3f GiB per operand, median of %d after %.0f ms of warm-up\n",
                 date, o.commit.c_str(), o.gib, o.reps, o.warmup_ms);
    std::fprintf(f, "op,impl,prec,n,batch,ms,gflops,gbs,roofline_fraction\n");
    for (const row& r : rows)
      std::fprintf(f, "%s,%s,%s,%d,%lld,%.5f,%.2f,%.1f,%.4f\n", r.op.c_str(), r.impl.c_str(),
                   r.prec.c_str(), r.n, (long long)r.batch, r.ms, r.gflops, r.gbs, r.frac);
    std::fclose(f);
  }
  return 0;
}
