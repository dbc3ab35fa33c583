// What scripts/cuco_bench.cu and scripts/bght_bench.cu share: their arguments (N LOADS REPEATS) and their
// timing, as NVBench reports it: hot (launches back to back between two CUDA events, the mean; one at a time
// when each needs an untimed step first) and cold (L2 flushed before each launch, the median).

#pragma once

#include <thrust/device_vector.h>
#include <thrust/fill.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));       \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

struct timer {
  cudaEvent_t start, stop;
  thrust::device_vector<int> flush_buffer;
  int repeats;

  explicit timer(int r) : repeats(r)
  {
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    int device = 0, l2 = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    flush_buffer.resize(std::max(2 * l2, 128 << 20) / sizeof(int));
  }

  float elapsed_ms()
  {
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }

  // (hot: mean ms of back-to-back launches, cold: median ms with L2 flushed before each); before() runs
  // ahead of every launch, outside the events (hot then times one launch at a time)
  std::pair<double, double> operator()(std::function<void()> const& launch,
                                       std::function<void()> const& before = {})
  {
    if (before) { before(); }
    launch();  // warm-up
    CHECK(cudaDeviceSynchronize());
    double hot = 0;
    if (before) {
      for (int i = 0; i < repeats; ++i) {
        before();
        CHECK(cudaEventRecord(start));
        launch();
        CHECK(cudaEventRecord(stop));
        hot += elapsed_ms();
      }
    } else {
      CHECK(cudaEventRecord(start));
      for (int i = 0; i < repeats; ++i) { launch(); }
      CHECK(cudaEventRecord(stop));
      hot = elapsed_ms();
    }
    std::vector<double> cold;
    for (int i = 0; i < repeats; ++i) {
      if (before) { before(); }
      thrust::fill(flush_buffer.begin(), flush_buffer.end(), i);
      CHECK(cudaEventRecord(start));
      launch();
      CHECK(cudaEventRecord(stop));
      cold.push_back(elapsed_ms());
    }
    std::sort(cold.begin(), cold.end());
    return {hot / repeats, cold[cold.size() / 2]};
  }
};

struct bench_args {
  std::size_t n;
  std::vector<double> loads;
  int repeats;
};

// N LOADS REPEATS, e.g. 67108864 0.5,0.8,0.9,0.95 20; bad input: one line, exit 2
inline bench_args parse_bench_args(int argc, char** argv)
{
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s N LOADS REPEATS (e.g. 67108864 0.5,0.8,0.9,0.95 20)\n", argv[0]);
    std::exit(2);
  }
  bench_args args{std::strtoull(argv[1], nullptr, 10), {}, std::atoi(argv[3])};
  std::stringstream list(argv[2]);
  for (std::string item; std::getline(list, item, ',');) { args.loads.push_back(std::atof(item.c_str())); }
  bool ok = args.n >= 1 && args.n <= (1ull << 31) && !args.loads.empty() && args.repeats >= 1;
  for (double load : args.loads) { ok = ok && load > 0 && load < 1; }
  if (!ok) {
    std::fprintf(stderr, "N from 1 to 2^31, loads between 0 and 1, REPEATS at least 1\n");
    std::exit(2);
  }
  return args;
}
