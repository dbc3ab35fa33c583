// cuCollections' static_map find and insert benchmarks (benchmarks/static_map/{find,insert}_bench.cu) without
// NVBench, beside the app's workload: static_map<uint32_t, uint32_t> with the benchmarks' map (its defaults:
// linear_probing<4, xxhash_32>, one slot per bucket; other CG sizes too, to see which is best), keys from
// cuco's own key_generator (0..N-1 shuffled, distribution::unique), the table asked for N / load slots, pairs
// (key, 0). Built by scripts/peer_bench.py with nvcc against RAYTRACER_CUCO_DIR; no GPU needed to build it.
//
// Each op is timed hot and cold (peer_bench.cuh). A find is timed three ways:
//   in order  the keys looked up in the order they were inserted (cuCollections' find benchmark)
//   shuffled  the same keys in another random order (the app's rows: every variant gets these)
//   absent    N keys none of which is in the table, shuffled
// An insert is timed into an emptied table each launch (clear_async outside the events); cuCollections'
// insert benchmark inserts again into the full table from its second launch on.
//
//   cuco_bench N LOADS REPEATS     e.g. cuco_bench 67108864 0.5,0.8,0.9,0.95 20

#include <thrust/version.h>

#if THRUST_VERSION >= 300000
// CCCL 3.0 dropped thrust::identity, which cuCollections releases of 2024 still name (as in cuco_shim.cu)
namespace thrust {
template <typename T = void>
struct identity {
  __host__ __device__ constexpr T const& operator()(T const& x) const noexcept { return x; }
};
template <>
struct identity<void> {
  template <typename T>
  __host__ __device__ constexpr T&& operator()(T&& x) const noexcept
  {
    return static_cast<T&&>(x);
  }
};
}  // namespace thrust
#endif

#include <cuco/static_map.cuh>
#include <cuco/utility/key_generator.cuh>

#include "peer_bench.cuh"

#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/random.h>
#include <thrust/sequence.h>
#include <thrust/shuffle.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using key_type   = std::uint32_t;
using value_type = std::uint32_t;
using pair_type  = cuco::pair<key_type, value_type>;

struct is_sentinel {
  __host__ __device__ bool operator()(value_type v) const { return v == ~value_type{0}; }
};

template <int CGSize>
void run(std::size_t n, double load, timer& time, thrust::device_vector<key_type> const& keys,
         thrust::device_vector<key_type> const& shuffled, thrust::device_vector<key_type> const& absent,
         bool default_map)
{
  using probing = cuco::linear_probing<CGSize, cuco::default_hash_function<key_type>>;
  using map_type = cuco::static_map<key_type, value_type, cuco::extent<std::size_t>, cuda::thread_scope_device,
                                    thrust::equal_to<key_type>, probing,
                                    cuco::cuda_allocator<pair_type>, cuco::storage<1>>;
  std::size_t const size = n / load;
  map_type map{size, cuco::empty_key<key_type>{~key_type{0}}, cuco::empty_value<value_type>{~value_type{0}}};
  thrust::device_vector<pair_type> pairs(n);
  thrust::transform(keys.begin(), keys.end(), pairs.begin(),
                    [] __device__(key_type k) { return pair_type(k, value_type{}); });
  thrust::device_vector<value_type> result(n);
  auto rate = [&](double ms) { return n / (ms * 1e-3) / 1e9; };
  char name[64];
  std::snprintf(name, sizeof name, "linear_probing<%d>%s", CGSize, default_map ? " (default)" : "");

  auto insert = time([&] { map.insert_async(pairs.begin(), pairs.end()); }, [&] { map.clear_async(); });
  CHECK(cudaDeviceSynchronize());
  std::size_t const stored = map.size();
  std::printf("%-28s load %.2f (capacity %zu, load %.3f) insert             hot %6.2f  cold %6.2f G/s%s\n",
              name, load, map.capacity(), double(n) / map.capacity(), rate(insert.first), rate(insert.second),
              stored == n ? "" : "  WRONG SIZE");
  struct query {
    char const* what;
    thrust::device_vector<key_type> const* keys;
    bool present;
  } const queries[] = {{"find in order  ", &keys, true}, {"find shuffled  ", &shuffled, true},
                       {"find absent    ", &absent, false}};
  for (auto const& q : queries) {
    auto t = time([&] { map.find_async(q.keys->begin(), q.keys->end(), result.begin()); });
    auto const missing = thrust::count_if(result.begin(), result.end(), is_sentinel{});
    bool const ok = q.present ? missing == 0 : missing == static_cast<std::ptrdiff_t>(n);
    std::printf("%-28s load %.2f (capacity %zu, load %.3f) %s    hot %6.2f  cold %6.2f G/s%s\n", name, load,
                map.capacity(), double(n) / map.capacity(), q.what, rate(t.first), rate(t.second),
                ok ? "" : "  WRONG ANSWERS");
  }
  std::fflush(stdout);
}

int main(int argc, char** argv)
{
  auto const [n, loads, repeats] = parse_bench_args(argc, argv);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("cuco_bench on %s: static_map<uint32_t, uint32_t>, %zu keys, %d repeats, CCCL %d\n", prop.name, n,
              repeats, THRUST_VERSION);

  thrust::device_vector<key_type> keys(n), shuffled(n), absent(n);
  cuco::utility::key_generator gen{42};
  gen.generate(cuco::utility::distribution::unique{}, keys.begin(), keys.end());  // 0..n-1, shuffled
  thrust::default_random_engine rng{7};
  shuffled = keys;
  thrust::shuffle(shuffled.begin(), shuffled.end(), rng);
  thrust::sequence(absent.begin(), absent.end(), static_cast<key_type>(n));
  thrust::shuffle(absent.begin(), absent.end(), rng);

  timer time{repeats};
  for (double load : loads) {
    run<4>(n, load, time, keys, shuffled, absent, true);
    run<1>(n, load, time, keys, shuffled, absent, false);
    run<2>(n, load, time, keys, shuffled, absent, false);
    run<8>(n, load, time, keys, shuffled, absent, false);
  }
  return 0;
}
