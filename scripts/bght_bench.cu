// BGHT's own rates benchmark (benchmarks/rates_per_technique.cu) for its bucketed cuckoo table, cut down to
// the loads asked for, beside the app's workload: bght::bcht<uint32_t, uint32_t> with buckets of 8, 16 (its
// default, the `bght-bcht` row's) and 32 slots, the table asked for N / load slots, timed through its public
// API as that benchmark times it (insert: bcht::insert, whose copy of the success flag to the host is inside
// the time; find: bcht::find). Built by scripts/peer_bench.py with nvcc against RAYTRACER_BGHT_DIR.
//
// The keys are 1..2N shuffled (BGHT's benchmark draws 2N distinct random keys on the host, which takes
// minutes at 2^27; its MurmurHash3 spreads either): the first N go into the table. Each op is timed hot and
// cold (peer_bench.cuh); a find three ways:
//   in order  the table's keys in the order they were inserted (BGHT's benchmark, exist ratio 1)
//   shuffled  the same keys in another random order (the app's rows)
//   absent    the other N keys, none in the table (exist ratio 0)
//
//   bght_bench N LOADS REPEATS     e.g. bght_bench 67108864 0.5,0.8,0.9,0.95 20

#include <bght/bcht.hpp>

#include "peer_bench.cuh"

#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/random.h>
#include <thrust/sequence.h>
#include <thrust/shuffle.h>
#include <thrust/transform.h>

#include <cstdint>
#include <cstdio>

using key_type   = std::uint32_t;
using value_type = std::uint32_t;
using pair_type  = bght::pair<key_type, value_type>;

constexpr key_type empty_key     = 0xFFFFFFFFu;
constexpr value_type empty_value = 0xFFFFFFFFu;

struct is_sentinel {
  __host__ __device__ bool operator()(value_type v) const { return v == empty_value; }
};

struct key_and_position {
  __host__ __device__ pair_type operator()(key_type key, value_type i) const { return {key, i}; }
};

template <int B>
void run(std::size_t n, double load, timer& time, thrust::device_vector<key_type> const& keys,
         thrust::device_vector<key_type> const& shuffled, thrust::device_vector<key_type> const& absent)
{
  using map_type = bght::bcht<key_type, value_type, bght::MurmurHash3_32<key_type>, bght::equal_to<key_type>,
                              cuda::thread_scope_device, bght::cuda_allocator<char>, B>;
  std::size_t const size = n / load;
  map_type map{size, empty_key, empty_value};
  thrust::device_vector<pair_type> pairs(n);
  thrust::transform(keys.begin(), keys.end(), thrust::counting_iterator<value_type>(0), pairs.begin(),
                    key_and_position{});
  thrust::device_vector<value_type> result(n);
  auto rate = [&](double ms) { return n / (ms * 1e-3) / 1e9; };
  std::size_t const capacity = (size + B - 1) / B * B;
  char name[64];
  std::snprintf(name, sizeof name, "bcht, buckets of %d%s", B, B == 16 ? " (default)" : "");

  bool built = true;
  auto insert = time([&] { built = map.insert(pairs.data().get(), pairs.data().get() + n) && built; },
                     [&] { map.clear(); });
  std::size_t const stored = map.size();
  std::printf("%-28s load %.2f (capacity %zu, load %.3f) insert             hot %6.2f  cold %6.2f G/s%s\n",
              name, load, capacity, double(n) / capacity, rate(insert.first), rate(insert.second),
              built && stored == n ? "" : "  BUILD FAILED");
  struct query {
    char const* what;
    thrust::device_vector<key_type> const* keys;
    bool present;
  } const queries[] = {{"find in order  ", &keys, true}, {"find shuffled  ", &shuffled, true},
                       {"find absent    ", &absent, false}};
  for (auto const& q : queries) {
    auto t = time([&] { map.find(q.keys->data().get(), q.keys->data().get() + n, result.data().get()); });
    auto const missing = thrust::count_if(result.begin(), result.end(), is_sentinel{});
    bool const ok = q.present ? missing == 0 : missing == static_cast<std::ptrdiff_t>(n);
    std::printf("%-28s load %.2f (capacity %zu, load %.3f) %s    hot %6.2f  cold %6.2f G/s%s\n", name, load,
                capacity, double(n) / capacity, q.what, rate(t.first), rate(t.second),
                ok ? "" : "  WRONG ANSWERS");
  }
  std::fflush(stdout);
}

int main(int argc, char** argv)
{
  auto const [n, loads, repeats] = parse_bench_args(argc, argv);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("bght_bench on %s: bcht<uint32_t, uint32_t>, %zu keys, %d repeats, CCCL %d\n", prop.name, n,
              repeats, THRUST_VERSION);

  thrust::device_vector<key_type> all(2 * n), keys(n), shuffled(n), absent(n);
  thrust::sequence(all.begin(), all.end(), key_type{1});
  thrust::default_random_engine rng{7};
  thrust::shuffle(all.begin(), all.end(), rng);
  thrust::copy(all.begin(), all.begin() + n, keys.begin());
  thrust::copy(all.begin() + n, all.end(), absent.begin());
  shuffled = keys;
  thrust::shuffle(shuffled.begin(), shuffled.end(), rng);
  all.clear();
  all.shrink_to_fit();

  timer time{repeats};
  for (double load : loads) {
    run<16>(n, load, time, keys, shuffled, absent);
    run<8>(n, load, time, keys, shuffled, absent);
    run<32>(n, load, time, keys, shuffled, absent);
  }
  return 0;
}
