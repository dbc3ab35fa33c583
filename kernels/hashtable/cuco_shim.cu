// A C interface to cuCollections' static_map<uint32_t, uint32_t> for the app's `cuco-static-map` peer:
// kernels/hashtable/cuco.py builds this file with nvcc against a cuCollections source folder the user
// names (RAYTRACER_CUCO_DIR) and calls it through ctypes with device pointers. Every call queues its work on
// the given stream (0: the legacy default stream, where the app's timer records its CUDA events) and
// returns without waiting, except rt_cuco_retrieve, which copies the table out for the check.
// Returns: 0 (or a count) on success, -1 on failure with the reason in rt_cuco_error().

#include <thrust/version.h>

#if THRUST_VERSION >= 300000
// CCCL 3.0 dropped thrust::identity, which cuCollections releases of 2024 still name: a stand-in
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
#if __has_include(<cuco/utility/reduction_functors.cuh>)
#include <cuco/utility/reduction_functors.cuh>
#define RT_CUCO_HAS_APPLY 1
#endif

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>
#include <exception>
#include <string>

namespace {

using key_type   = std::uint32_t;
using value_type = std::uint32_t;
using map_type   = cuco::static_map<key_type, value_type>;

constexpr key_type empty_key     = 0xFFFFFFFFu;  // the app's KEY_EMPTY and KEY_ERASED (layout.py)
constexpr key_type erased_key    = 0xFFFFFFFEu;
constexpr value_type empty_value = 0xFFFFFFFFu;  // what a find answers for an absent key (VALUE_ABSENT)

thread_local std::string last_error;

// the pair (keys[i], i): the value of a key is its position in the batch, as in the app's own tables
struct key_and_position {
  key_type const* keys;
  __host__ __device__ cuco::pair<key_type, value_type> operator()(std::size_t i) const
  {
    return {keys[i], static_cast<value_type>(i)};
  }
};

// the pair (keys[i], 1): insert-or-add counts each key
struct key_and_one {
  key_type const* keys;
  __host__ __device__ cuco::pair<key_type, value_type> operator()(std::size_t i) const
  {
    return {keys[i], value_type{1}};
  }
};

template <typename Op>
auto pairs(Op op)
{
  return thrust::make_transform_iterator(thrust::counting_iterator<std::size_t>(0), op);
}

cuda::stream_ref stream_of(void* stream) { return cuda::stream_ref{static_cast<cudaStream_t>(stream)}; }

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

map_type& map_of(void* map) { return *static_cast<map_type*>(map); }

}  // namespace

extern "C" {

int rt_cuco_api_version() { return 1; }

char const* rt_cuco_error() { return last_error.c_str(); }

int rt_cuco_has_insert_or_add()
{
#ifdef RT_CUCO_HAS_APPLY
  return 1;
#else
  return 0;
#endif
}

void* rt_cuco_new(std::uint64_t capacity)
{
  try {
    return new map_type{capacity,
                        cuco::empty_key<key_type>{empty_key},
                        cuco::empty_value<value_type>{empty_value},
                        cuco::erased_key<key_type>{erased_key}};
  } catch (std::exception const& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "unknown C++ exception";
  }
  return nullptr;
}

void rt_cuco_free(void* map) { delete static_cast<map_type*>(map); }

std::int64_t rt_cuco_capacity(void* map)
{
  return guarded([&] { return static_cast<std::int64_t>(map_of(map).capacity()); });
}

std::int64_t rt_cuco_clear(void* map, void* stream)
{
  return guarded([&] {
    map_of(map).clear_async(stream_of(stream));
    return std::int64_t{0};
  });
}

std::int64_t rt_cuco_insert(void* map, key_type const* keys, std::uint64_t n, void* stream)
{
  return guarded([&] {
    auto first = pairs(key_and_position{keys});
    map_of(map).insert_async(first, first + n, stream_of(stream));
    return std::int64_t{0};
  });
}

std::int64_t rt_cuco_insert_or_add(void* map, key_type const* keys, std::uint64_t n, void* stream)
{
  return guarded([&] {
#ifdef RT_CUCO_HAS_APPLY
    auto first = pairs(key_and_one{keys});
    map_of(map).insert_or_apply_async(first, first + n, cuco::reduce::plus{}, stream_of(stream));
    return std::int64_t{0};
#else
    last_error = "this cuCollections has no insert_or_apply";
    return std::int64_t{-1};
#endif
  });
}

std::int64_t rt_cuco_find(void* map, key_type const* keys, value_type* answers, std::uint64_t n, void* stream)
{
  return guarded([&] {
    map_of(map).find_async(keys, keys + n, answers, stream_of(stream));
    return std::int64_t{0};
  });
}

std::int64_t rt_cuco_erase(void* map, key_type const* keys, std::uint64_t n, void* stream)
{
  return guarded([&] {
    map_of(map).erase_async(keys, keys + n, stream_of(stream));
    return std::int64_t{0};
  });
}

// copies every key and value in the table to keys_out and values_out (room for capacity() of each) and
// returns how many there are; waits for the stream
std::int64_t rt_cuco_retrieve(void* map, key_type* keys_out, value_type* values_out, void* stream)
{
  return guarded([&] {
    auto ends = map_of(map).retrieve_all(keys_out, values_out, stream_of(stream));
    return static_cast<std::int64_t>(ends.first - keys_out);
  });
}

}  // extern "C"
