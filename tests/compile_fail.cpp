// Each CASE_ must fail to compile: sizes that are types are checked by the compiler.
// (A control build without any CASE_ defined must compile: see test_types.cpp.)
#include <tinybatch/tinybatch.hpp>
namespace tb = tinybatch;

void f() {
  // CASE_CONTROL: the same declarations, every call well-formed.
  tb::batch<double, 4, 4> A0(1), B0(1), C0(1);
  tb::gemm(tb::seq, A0, B0, C0);
  std::vector<int> info(1), ipiv(4);
#if defined(CASE_GEMM_INNER)  // op(A) is 3x4, B is 3x3
  tb::batch<double, 3, 4> A(1);
  tb::batch<double, 3, 3> B(1), C(1);
  tb::gemm(tb::seq, A, B, C);
#elif defined(CASE_GEMM_ROWS)  // A^T is 4x3 but C has 3 rows
  tb::batch<double, 3, 4> A(1);
  tb::batch<double, 3, 3> B(1), C(1);
  tb::gemm(tb::seq, tb::trans, tb::no_trans, 1.0, A, B, 0.0, C);
#elif defined(CASE_TRSM_SIDE)  // B 4x3: right side needs cols 4
  tb::batch<double, 4, 4> A(1);
  tb::batch<double, 4, 3> B(1);
  tb::trsm(tb::seq, tb::right, tb::lower, tb::no_trans, tb::non_unit, 1.0, A, B);
#elif defined(CASE_POTRS_ROWS)
  tb::batch<float, 4, 4> A(1);
  tb::batch<float, 5, 2> B(1);
  tb::potrs(tb::seq, tb::lower, A, B);
#elif defined(CASE_GETRF_SCALAR)  // mixed precision is not silently converted
  tb::batch<double, 4, 4> A(1);
  tb::batch<float, 4, 1> B(1);
  tb::gesv(tb::seq, A, ipiv, B, info);
#endif
}
