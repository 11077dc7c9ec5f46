// Must not compile with g++: <tinybatch/cuda.hpp> needs nvcc (tests/cuda/meson.build).
#include <tinybatch/cuda.hpp>
