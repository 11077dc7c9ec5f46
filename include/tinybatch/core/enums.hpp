// The BLAS/LAPACK "character" arguments (TRANS, UPLO, SIDE, DIAG).
//
// Each comes as a run-time enum and as constants whose value is part of the type
// (`tinybatch::trans`, `tinybatch::lower`, ...). Passing a constant lets the front end check
// fixed sizes at compile time (C = A^T B with mismatched extents does not compile); passing the
// enum defers the check to run time.
#pragma once

#include <type_traits>

namespace tinybatch {

enum class op { no_trans, trans, conj_trans };
enum class uplo { lower, upper };
enum class side { left, right };
enum class diag { non_unit, unit };

template <class E, E V>
struct constant {
  using value_type = E;
  static constexpr E value = V;
  constexpr operator E() const noexcept { return V; }
};

inline constexpr constant<op, op::no_trans> no_trans{};
inline constexpr constant<op, op::trans> trans{};
inline constexpr constant<op, op::conj_trans> conj_trans{};
inline constexpr constant<uplo, uplo::lower> lower{};
inline constexpr constant<uplo, uplo::upper> upper{};
inline constexpr constant<side, side::left> left{};
inline constexpr constant<side, side::right> right{};
inline constexpr constant<diag, diag::non_unit> non_unit{};
inline constexpr constant<diag, diag::unit> unit{};

template <class T>
struct is_constant : std::false_type {};
template <class E, E V>
struct is_constant<constant<E, V>> : std::true_type {};
template <class T>
inline constexpr bool is_constant_v = is_constant<std::remove_cvref_t<T>>::value;

/// An argument of enum type E: the enum itself or one of its constants.
template <class A, class E>
concept enum_arg = std::is_same_v<std::remove_cvref_t<A>, E> ||
                   (is_constant_v<A> && std::is_same_v<typename std::remove_cvref_t<A>::value_type, E>);

}  // namespace tinybatch
