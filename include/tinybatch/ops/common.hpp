// What every front-end function shares: compile-time shape rules and the run-time argument
// checks that turn misuse into an exception naming the routine and the argument, before any
// matrix is touched.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/enums.hpp"
#include "../core/error.hpp"
#include "../core/pivots.hpp"
#include "../core/views.hpp"
#include "../policy.hpp"

namespace tinybatch::detail {

constexpr bool ext_compatible(int a, int b) { return a == dynamic || b == dynamic || a == b; }

/// Static rows/cols of op(V) when both are known at compile time, `dynamic` otherwise.
template <class OpArg, class V>
constexpr int static_op_rows() {
  if constexpr (is_constant_v<OpArg>)
    return std::remove_cvref_t<OpArg>::value == op::no_trans ? V::static_rows : V::static_cols;
  else
    return V::static_rows == V::static_cols ? V::static_rows : dynamic;
}
template <class OpArg, class V>
constexpr int static_op_cols() {
  if constexpr (is_constant_v<OpArg>)
    return std::remove_cvref_t<OpArg>::value == op::no_trans ? V::static_cols : V::static_rows;
  else
    return V::static_rows == V::static_cols ? V::static_cols : dynamic;
}

template <class V>
concept square_if_static = ext_compatible(V::static_rows, V::static_cols);

template <class V>
concept has_stride = requires(const V& v) { v.stride(); };

template <class V>
using scalar_of = typename V::value_type;

template <class V>
concept writable = !std::is_const_v<typename V::element_type>;

template <class... V>
concept same_scalar = (std::is_same_v<scalar_of<V>, scalar_of<std::tuple_element_t<0, std::tuple<V...>>>> && ...);

/// What the argument checks need to know of a view, at run time. The checks themselves are
/// plain functions compiled once per program: as templates over the view type (its scalar
/// and sizes) each call site instantiated its own copy with its own error messages: 22% of
/// the code of test_simd_solve_0's few-set build, 1143 copies in its release-CI build.
struct view_facts {
  enum class form { strided, pointers, variable } kind;
  index_t count;
  int rows, cols, ld;  // uniform views
  index_t stride;      // strided views
  bool storage;        // data pointer, pointer array, or all four arrays of a variable batch non-null
};

template <class V>
view_facts facts_of(const V& v) {
  if constexpr (!V::uniform) {
    return {view_facts::form::variable, v.count(), 0, 0, 0, 0,
            v.pointers() && v.rows_array() && v.cols_array() && v.ld_array()};
  } else {
    const auto s = v.shape();
    if constexpr (requires { v.stride(); })
      return {view_facts::form::strided, v.count(), s.rows(), s.cols(), s.ld, v.stride(), v.data() != nullptr};
    else
      return {view_facts::form::pointers, v.count(), s.rows(), s.cols(), s.ld, 0, v.pointers() != nullptr};
  }
}

/// Checks one view: non-negative count, non-null storage, legal leading dimension and stride.
inline void check_view_facts(const char* routine, const char* name, const view_facts& f, bool output) {
  const auto msg = [name](auto&&... parts) { return (std::string(name) + ... + std::string(parts)); };
  require(f.count >= 0, routine, [&] { return msg(": negative batch count"); });
  if (f.count == 0) return;
  if (f.kind == view_facts::form::variable) {
    require(f.storage, routine,
            [&] { return msg(": null pointer, size or leading-dimension array with a non-zero count"); });
    return;
  }
  require(f.rows >= 0 && f.cols >= 0, routine, [&] { return msg(": negative matrix size"); });
  require(f.ld >= (f.rows > 1 ? f.rows : 1), routine, [&] {
    return msg(": leading dimension ", std::to_string(f.ld), " < rows ", std::to_string(f.rows));
  });
  if (f.kind == view_facts::form::strided) {
    require(f.storage, routine, [&] { return msg(": null data pointer with a non-zero count"); });
    // Inputs may share one matrix (stride 0, as cuBLAS allows); outputs may not overlap.
    const index_t need = output ? index_t(f.ld) * f.cols : 0;
    require(f.stride >= need, routine, [&] {
      return msg(": stride ", std::to_string(f.stride), " is smaller than ", std::to_string(need),
                 output ? " (output matrices would overlap)" : "");
    });
  } else {
    require(f.storage, routine, [&] { return msg(": null pointer array with a non-zero count"); });
  }
}
template <class V>
void check_view(const char* routine, const char* name, const V& v, bool output) {
  check_view_facts(routine, name, facts_of(v), output);
}

inline void check_count(const char* routine, const char* name, index_t got, index_t want) {
  require(got == want, routine, [&] {
    return std::string(name) + " has " + std::to_string(got) + " matrices, expected " + std::to_string(want);
  });
}

/// check_matrices' failure, compiled once (not once per view types and dims lambda): the
/// reason, the sizes of the matrices the check looked at (in argument order) and which matrix.
struct matrix_size {
  int rows, cols;
};
inline void matrix_failed(const char* routine, const char* why, index_t k,
                          std::initializer_list<matrix_size> sizes = {}) {
  std::string s(why);
  const char* sep = " (";
  for (const matrix_size& z : sizes) {
    s += sep + std::to_string(z.rows) + " x " + std::to_string(z.cols);
    sep = ", ";
  }
  if (sizes.size() > 0) s += sizes.size() > 1 ? " in argument order)" : ")";
  if (k >= 0) s += " (matrix " + std::to_string(k) + ")";
  require(false, routine, s);
}

/// Per-matrix check: `dims(a, b, ...)` gets each view's matrix_ref (a shape-only one for
/// uniform views, which is checked once) and returns an error text or nullptr. On the host,
/// pointer arrays and variable-size batches are also checked matrix by matrix (null
/// matrices, per-matrix sizes); device-side arrays cannot be read here and are trusted, as
/// cuBLAS trusts them.
template <class Policy, class Dims, class... V>
void check_matrices(const char* routine, const Policy&, Dims&& dims, const V&... v) {
  constexpr bool all_uniform = (V::uniform && ...);
  const index_t count = (v.count(), ...);
  auto fail = [routine](const char* why, index_t k) { matrix_failed(routine, why, k); };
  if constexpr (all_uniform) {
    if (const char* why = dims(v.shape()...))
      matrix_failed(routine, why, -1, {matrix_size{v.shape().rows(), v.shape().cols()}...});
  }
  if constexpr (is_host_policy<std::remove_cvref_t<Policy>>::value) {
    constexpr bool per_matrix = ((!V::uniform || !has_stride<V>) || ...);
    if constexpr (per_matrix) {
      for (index_t k = 0; k < count; ++k) {
        if (((v[k].data == nullptr) || ...)) fail("null matrix pointer", k);
        if constexpr (!all_uniform) {
          if (((v[k].ld < (v[k].rows() > 1 ? v[k].rows() : 1)) || ...))
            fail("leading dimension smaller than rows", k);
          if (((v[k].rows() < 0 || v[k].cols() < 0) || ...)) fail("negative matrix size", k);
          if (const char* why = dims(v[k]...))
            matrix_failed(routine, why, k, {matrix_size{v[k].rows(), v[k].cols()}...});
        }
      }
    }
  }
}

/// info arrays: one int per matrix.
inline void check_info(const char* routine, std::span<const int> info, index_t count) {
  require(index_t(info.size()) >= count, routine, [&] {
    return "info has " + std::to_string(info.size()) + " entries for " + std::to_string(count) + " matrices";
  });
  require(count == 0 || info.data() != nullptr, routine, "null info array");
}

/// Resolves a packed pivot buffer's stride (min(m, n) = mn of a uniform batch) and checks its
/// size. Pivots that are only read (`shared_ok`: getrs, whose A may be one matrix at stride 0)
/// may have stride 0 too: one factor's pivots for the whole batch. Compiled once, as
/// check_view_facts.
inline pivot_view check_pivot_facts(const char* routine, pivot_view p, index_t count, bool uniform, index_t mn,
                                    bool shared_ok = false) {
  if (count == 0) return p;  // nothing read or written (an empty variable-size batch included)
  if (p.is_pointer_array()) {
    require(count == 0 || p.pointers() != nullptr, routine, "null ipiv pointer array");
    require(p.size() >= count, routine, [&] {
      return "ipiv has " + std::to_string(p.size()) + " pointers for " + std::to_string(count) + " matrices";
    });
    return p;
  }
  if (uniform) {
    if (p.stride() < 0) p.set_stride(mn);
    require(p.stride() >= mn || (shared_ok && p.stride() == 0), routine, [&] {
      return "ipiv stride " + std::to_string(p.stride()) + " smaller than min(m, n) = " + std::to_string(mn) +
             (shared_ok ? " (or 0: one matrix's pivots for the whole batch)" : "");
    });
    require(count == 0 || p.size() >= (count - 1) * p.stride() + mn, routine, [&] {
      return "ipiv has " + std::to_string(p.size()) + " entries; " + std::to_string(count) + " matrices need " +
             std::to_string((count - 1) * p.stride() + mn);
    });
  } else {
    require(p.stride() >= 0, routine,
            "a variable-size batch needs ipiv as a pointer array or with an explicit stride (at least the "
            "largest min(m_k, n_k)); a plain int range has no packed layout for variable sizes");
    require(count == 0 || p.size() >= count * p.stride(), routine, [&] {
      return "ipiv has " + std::to_string(p.size()) + " entries; " + std::to_string(count) +
             " matrices at stride " + std::to_string(p.stride()) + " need " + std::to_string(count * p.stride());
    });
  }
  require(count == 0 || p.data() != nullptr, routine, "null ipiv buffer");
  return p;
}
template <class V>
pivot_view check_pivots(const char* routine, pivot_view p, const V& a, bool shared_ok = false) {
  index_t mn = 0;
  if constexpr (V::uniform) {
    const auto s = a.shape();
    mn = s.rows() < s.cols() ? s.rows() : s.cols();
  }
  return check_pivot_facts(routine, p, a.count(), V::uniform, mn, shared_ok);
}

// ---- Overlap between arguments -------------------------------------------------------------
// A matrix occupies the addresses from its first element to its last ((cols - 1) ld + rows
// elements): two matrices overlap when those ranges intersect, even where one's elements lie
// only in the other's gaps between columns (such layouts are refused, not mis-computed).

/// Where a strided view's matrices lie: the byte address of matrix 0, the byte stride, the
/// count and each matrix's byte extent.
struct span_facts {
  std::uintptr_t base;
  index_t count, stride, bytes;
};
inline index_t matrix_bytes(int rows, int cols, int ld, std::size_t elem) {
  return rows <= 0 || cols <= 0 ? 0 : (index_t(cols - 1) * ld + rows) * index_t(elem);
}
template <class V>
span_facts span_of(const V& v) {
  const auto s = v.shape();
  constexpr std::size_t e = sizeof(typename V::value_type);
  return {reinterpret_cast<std::uintptr_t>(v.data()), v.count(), v.stride() * index_t(e),
          matrix_bytes(s.rows(), s.cols(), s.ld, e)};
}
inline bool boxes_overlap(std::uintptr_t x, index_t xb, std::uintptr_t y, index_t yb) {
  return xb > 0 && yb > 0 && x < y + std::uintptr_t(yb) && y < x + std::uintptr_t(xb);
}
/// Whether some matrix of x overlaps some matrix of y: exact where the strides are equal or
/// one side is a single matrix (count 1 or stride 0); otherwise whether the two views' whole
/// address ranges intersect. Compiled once.
inline bool strided_overlap(span_facts x, span_facts y) {
  if (x.count == 0 || y.count == 0 || x.bytes == 0 || y.bytes == 0) return false;
  if (x.stride == 0) x.count = 1;
  if (y.stride == 0) y.count = 1;
  if (x.count == 1 && y.count == 1) return boxes_overlap(x.base, x.bytes, y.base, y.bytes);
  if (x.count == 1) x.stride = y.stride;
  if (y.count == 1) y.stride = x.stride;
  if (x.stride != y.stride)
    return boxes_overlap(x.base, (x.count - 1) * x.stride + x.bytes, y.base, (y.count - 1) * y.stride + y.bytes);
  // Matrix k of x and matrix j = k + q of y overlap iff -x.bytes < d + q s < y.bytes.
  const long long s = x.stride, d = (long long)(y.base) - (long long)(x.base);
  const long long lo = -x.bytes - d;  // need q s > lo: the smallest such q
  long long q = (lo >= 0 ? lo / s : -((-lo + s - 1) / s)) + 1;  // floor(lo / s) + 1
  if (q < -(x.count - 1)) q = -(x.count - 1);
  return q <= y.count - 1 && q * s < y.bytes - d;
}
inline void overlap_failed(const char* routine, const char* x, const char* y, index_t k) {
  require(false, routine, [&] {
    return std::string(x) + " overlaps " + y + (k < 0 ? std::string() : " (matrix " + std::to_string(k) + ")") +
           ": an output may share memory with no other argument";
  });
}
/// Output x must not overlap y (an input or another output). Strided views: all pairs of
/// matrices, O(1). Pointer arrays and variable-size batches (host policies only: device-side
/// arrays cannot be read here): matrix k against matrix k only.
template <class Policy, class VX, class VY>
void check_disjoint(const char* routine, const Policy&, const char* xn, const VX& x, const char* yn, const VY& y) {
  if constexpr (has_stride<VX> && has_stride<VY>) {
    if (strided_overlap(span_of(x), span_of(y))) overlap_failed(routine, xn, yn, -1);
  } else if constexpr (is_host_policy<std::remove_cvref_t<Policy>>::value) {
    constexpr std::size_t e = sizeof(typename VX::value_type);
    const index_t count = x.count() < y.count() ? x.count() : y.count();
    for (index_t k = 0; k < count; ++k) {
      const auto a = x[k];
      const auto b = y[k];
      if (boxes_overlap(reinterpret_cast<std::uintptr_t>(a.data), matrix_bytes(a.rows(), a.cols(), a.ld, e),
                        reinterpret_cast<std::uintptr_t>(b.data), matrix_bytes(b.rows(), b.cols(), b.ld, e)))
        overlap_failed(routine, xn, yn, k);
    }
  }
}

/// The matrices of one output given by pointers must not overlap each other: one pass where
/// they ascend in memory (the usual case); otherwise, where all have the same extent b and
/// their starts span at most 4 b per matrix, buckets of b bytes (two starts in one bucket
/// overlap, and only neighbouring buckets can); otherwise a sorted copy of their ranges.
struct matrix_box {
  std::uintptr_t begin, end;
};
inline void boxes_overlap_failed(const char* routine, const char* name) {
  require(false, routine, [&] {
    return std::string(name) + ": two of its matrices overlap (pointer array; outputs may not overlap)";
  });
}
inline void check_boxes_disjoint(const char* routine, const char* name, std::vector<matrix_box>& boxes) {
  if (boxes.empty()) return;
  const std::uintptr_t b = boxes[0].end - boxes[0].begin;
  std::uintptr_t lo = boxes[0].begin, hi = lo;
  bool same = true;
  for (const matrix_box& x : boxes) {
    same = same && x.end - x.begin == b;
    lo = x.begin < lo ? x.begin : lo;
    hi = x.begin > hi ? x.begin : hi;
  }
  if (same && (hi - lo) / b < 4 * std::uintptr_t(boxes.size())) {
    std::vector<std::uintptr_t> start(std::size_t((hi - lo) / b + 2), 0);  // begin - lo + 1, 0: empty
    for (const matrix_box& x : boxes) {
      std::uintptr_t& s = start[std::size_t((x.begin - lo) / b)];
      if (s != 0) boxes_overlap_failed(routine, name);
      s = x.begin - lo + 1;
    }
    for (std::size_t q = 0; q + 1 < start.size(); ++q)
      if (start[q] != 0 && start[q + 1] != 0 && start[q + 1] < start[q] + b) boxes_overlap_failed(routine, name);
    return;
  }
  std::sort(boxes.begin(), boxes.end(), [](const matrix_box& x, const matrix_box& y) { return x.begin < y.begin; });
  for (std::size_t k = 1; k < boxes.size(); ++k)
    if (boxes[k].begin < boxes[k - 1].end) boxes_overlap_failed(routine, name);
}
template <class Policy, class V>
void check_distinct_outputs(const char* routine, const Policy&, const char* name, const V& v) {
  if constexpr (!has_stride<V> && is_host_policy<std::remove_cvref_t<Policy>>::value) {
    constexpr std::size_t e = sizeof(typename V::value_type);
    const auto box = [&](index_t k) {
      const auto m = v[k];
      const auto p = reinterpret_cast<std::uintptr_t>(m.data);
      return matrix_box{p, p + std::uintptr_t(matrix_bytes(m.rows(), m.cols(), m.ld, e))};
    };
    std::uintptr_t end = 0;
    index_t k = 0;
    for (; k < v.count(); ++k) {
      const matrix_box b = box(k);
      if (b.end == b.begin) continue;
      if (b.begin < end) break;
      end = b.end;
    }
    if (k == v.count()) return;
    std::vector<matrix_box> boxes;
    boxes.reserve(std::size_t(v.count()));
    for (k = 0; k < v.count(); ++k)
      if (const matrix_box b = box(k); b.end != b.begin) boxes.push_back(b);
    check_boxes_disjoint(routine, name, boxes);
  }
}

/// Variable-size batches with a pivot buffer: its stride must hold every matrix's min(m_k, n_k)
/// pivots (host policies: device-side size arrays cannot be read here).
template <class Policy, class V>
void check_pivot_room(const char* routine, const Policy&, const pivot_view& p, const V& a) {
  if constexpr (!V::uniform && is_host_policy<std::remove_cvref_t<Policy>>::value) {
    if (p.is_pointer_array()) return;
    for (index_t k = 0; k < a.count(); ++k) {
      const auto m = a[k];
      const index_t mn = m.rows() < m.cols() ? m.rows() : m.cols();
      if (mn > p.stride())
        require(false, routine, [&] {
          return "ipiv stride " + std::to_string(p.stride()) + " smaller than min(m, n) = " + std::to_string(mn) +
                 " of matrix " + std::to_string(k);
        });
    }
  }
}

template <class A, class B>
concept solve_shapes = square_if_static<A> && ext_compatible(A::static_rows, B::static_rows);

inline const char* square_dims(const auto& ma) {
  return ma.rows() != ma.cols() ? "A is not square" : nullptr;
}
inline const char* solve_dims(const auto& ma, const auto& mb) {
  if (ma.rows() != ma.cols()) return "A is not square";
  if (ma.rows() != mb.rows()) return "order of A differs from rows of B";
  return nullptr;
}

template <class Policy>
using backend_t = backend<std::remove_cvref_t<Policy>>;

}  // namespace tinybatch::detail
