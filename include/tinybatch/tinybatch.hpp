// tinybatch: linear algebra on huge batches of small matrices.
// This umbrella header gives the types, the policies and every front-end operation with the
// host backend. GPU users include <tinybatch/cuda.hpp> as well (in files nvcc compiles);
// Eigen interop is <tinybatch/eigen.hpp>.
#pragma once

#include "core/batch.hpp"
#include "core/compact.hpp"
#include "core/config.hpp"
#include "core/dispatch.hpp"
#include "core/enums.hpp"
#include "core/error.hpp"
#include "core/matrix_ref.hpp"
#include "core/pivots.hpp"
#include "core/views.hpp"
#include "core/tuning.hpp"
#include "core/vbatch.hpp"
#include "policy.hpp"

// The compact layout's kernels are host SIMD code: in translation units nvcc compiles (which
// cannot use them) only its types are declared.
#if !defined(__CUDACC__)
#include "ops/compact.hpp"
#endif
#include "ops/gemm.hpp"
#include "ops/gesv.hpp"
#include "ops/getrf.hpp"
#include "ops/getri.hpp"
#include "ops/getrs.hpp"
#include "ops/inverse.hpp"
#include "ops/posv.hpp"
#include "ops/potrf.hpp"
#include "ops/potrs.hpp"
#include "ops/trsm.hpp"

#include "host/backend.hpp"
