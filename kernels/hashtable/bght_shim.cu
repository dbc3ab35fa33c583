// A C interface to BGHT's bucketed cuckoo hash table, bght::bcht<uint32_t, uint32_t> (buckets of 16
// slots, three hash functions, its defaults), for the app's `bght-bcht` peer: kernels/hashtable/bght.py
// builds this file with nvcc against a BGHT source folder the user names (RAYTRACER_BGHT_DIR) and calls it
// through ctypes with device pointers. Insert launches BGHT's own insert kernel as bcht::insert does, minus
// the one-byte copy of its success flag to the host (that copy would wait for the kernel inside the
// timing); whether every key went in is read afterwards by rt_bght_size. Find is bcht::find (no wait). BGHT
// ends the process on a failed CUDA call: rt_bght_new makes a table only where it fits.
// Returns: 0 (or a count) on success, -1 on failure with the reason in rt_bght_error().

#include <bght/bcht.hpp>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>
#include <exception>
#include <string>

namespace {

using key_type   = std::uint32_t;
using value_type = std::uint32_t;
using map_type   = bght::bcht<key_type, value_type>;

constexpr key_type empty_key     = 0xFFFFFFFFu;  // the app's KEY_EMPTY (layout.py)
constexpr value_type empty_value = 0xFFFFFFFFu;  // what a find answers for an absent key (VALUE_ABSENT)
constexpr std::uint32_t block_size = 128;         // bcht::insert's own

thread_local std::string last_error;

// the pair (keys[i], i): the value of a key is its position in the batch, as in the app's own tables
struct key_and_position {
  key_type const* keys;
  __host__ __device__ bght::pair<key_type, value_type> operator()(std::size_t i) const
  {
    return {keys[i], static_cast<value_type>(i)};
  }
};

template <typename F>
std::int64_t guarded(F&& f)
{
  try {
    return f();
  } catch (std::exception const& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "unknown C++ exception";
  }
  return -1;
}

std::int64_t launched()
{
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess) { return 0; }
  last_error = cudaGetErrorString(status);
  return -1;
}

map_type& map_of(void* map) { return *static_cast<map_type*>(map); }

}  // namespace

extern "C" {

int rt_bght_api_version() { return 1; }

char const* rt_bght_error() { return last_error.c_str(); }

int rt_bght_bucket_size() { return map_type::bucket_size; }

std::int64_t rt_bght_capacity(std::uint64_t capacity);

// BGHT ends the process (std::terminate) on any failed CUDA call, an allocation included: the table is made
// only where the device has room for it and a margin
void* rt_bght_new(std::uint64_t capacity)
{
  std::size_t free_bytes = 0, total_bytes = 0;
  cudaError_t status = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (status != cudaSuccess) {
    last_error = cudaGetErrorString(status);
    return nullptr;
  }
  auto const needed = static_cast<std::size_t>(rt_bght_capacity(capacity)) * sizeof(bght::pair<key_type, value_type>);
  if (needed + (std::size_t{64} << 20) > free_bytes) {
    last_error = "a table of " + std::to_string(needed >> 20) + " MiB does not fit in the device's " +
                 std::to_string(free_bytes >> 20) + " MiB free (with 64 MiB to spare)";
    return nullptr;
  }
  try {
    return new map_type{capacity, empty_key, empty_value};
  } catch (std::exception const& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "unknown C++ exception";
  }
  return nullptr;
}

void rt_bght_free(void* map) { delete static_cast<map_type*>(map); }

// bcht rounds the capacity up to whole buckets and keeps it private: the same rounding
std::int64_t rt_bght_capacity(std::uint64_t capacity)
{
  auto const b = static_cast<std::uint64_t>(map_type::bucket_size);
  auto const slots = capacity < 1 ? std::uint64_t{1} : capacity;
  return static_cast<std::int64_t>((slots + b - 1) / b * b);
}

// empties the table (bcht::clear: a fill on the legacy default stream, which waits)
std::int64_t rt_bght_clear(void* map)
{
  return guarded([&] {
    map_of(map).clear();
    return launched();
  });
}

std::int64_t rt_bght_insert(void* map, key_type const* keys, std::uint64_t n, void* stream)
{
  return guarded([&] {
    if (n == 0) { return std::int64_t{0}; }
    auto first = thrust::make_transform_iterator(thrust::counting_iterator<std::size_t>(0),
                                                 key_and_position{keys});
    auto const blocks = static_cast<std::uint32_t>((n + block_size - 1) / block_size);
    bght::detail::kernels::tiled_insert_kernel<<<blocks, block_size, 0, static_cast<cudaStream_t>(stream)>>>(
      first, first + n, map_of(map));
    return launched();
  });
}

std::int64_t rt_bght_find(void* map, key_type const* keys, value_type* answers, std::uint64_t n, void* stream)
{
  return guarded([&] {
    if (n == 0) { return std::int64_t{0}; }
    map_of(map).find(keys, keys + n, answers, static_cast<cudaStream_t>(stream));
    return launched();
  });
}

// the number of keys in the table (bcht::size: counts the full slots; waits for the stream)
std::int64_t rt_bght_size(void* map, void* stream)
{
  return guarded([&] {
    return static_cast<std::int64_t>(map_of(map).size(static_cast<cudaStream_t>(stream)));
  });
}

}  // extern "C"
