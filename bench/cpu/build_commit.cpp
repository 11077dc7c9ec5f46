// The commit bench_cpu was built from, as `git describe --always --dirty` saw it at build time.
// Its own translation unit: a new commit recompiles this file, not the benchmark.
#include "bench_commit.h"

const char* tb_bench_build_commit() { return TB_BENCH_BUILD_COMMIT; }
