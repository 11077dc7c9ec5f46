// The hybrid benchmark: bench_calu.cpp compiled by nvcc (hybrid CALU and cuSOLVER added).
#include "bench_calu.cpp"
