// OpenBLAS's own threads off while tinybatch's threads call it: each call is one core's work
// (a matrix of a batch, a task of CALU's graph), and a threaded BLAS call inside each of P
// OpenMP threads starts P x P threads. Measured on a 2-core EPYC VM, host potrf of 3000
// matrices of orders up to 128 through CBLAS: 324 ms with OpenBLAS's threads on, 28 ms off
// (bench/cpu/bench_potrf_var). Restored on exit. Other BLAS libraries: nothing is changed.
// Include it after <cblas.h>: OpenBLAS's header defines OPENBLAS_VERSION.
#pragma once

namespace tinybatch::host::blocked {

class blas_single_threaded {
 public:
  blas_single_threaded() {
#ifdef OPENBLAS_VERSION
    saved_ = openblas_get_num_threads();
    if (saved_ != 1) openblas_set_num_threads(1);
#endif
  }
  ~blas_single_threaded() {
#ifdef OPENBLAS_VERSION
    if (saved_ != 1) openblas_set_num_threads(saved_);
#endif
  }
  blas_single_threaded(const blas_single_threaded&) = delete;
  blas_single_threaded& operator=(const blas_single_threaded&) = delete;

 private:
  int saved_ = 1;
};

}  // namespace tinybatch::host::blocked
