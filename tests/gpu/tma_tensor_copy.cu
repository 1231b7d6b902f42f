// cp.async.bulk.tensor through hopper::tensor_map, checked byte for byte against a CPU model of
// the copy engine: every rank 1-5 with padded strides and boxes reaching outside the tensor
// (zero fill, NaN fill), each swizzle mode (the shared-memory image read back and compared with
// chunk ^ row), tensor stores (clipped at the edges, swizzled source), and the multicast load into
// 2 and 4 CTAs of a cluster.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "gpu_test.hpp"
#include "hopper/objects/tensor_map.hpp"
#include "hopper/ptx/cluster.cuh"
#include "hopper/ptx/cp_async_bulk.cuh"
#include "hopper/ptx/cp_async_bulk_tensor.cuh"
#include "hopper/ptx/fence.cuh"
#include "hopper/ptx/mbarrier.cuh"
#include "hopper/ptx/special_registers.cuh"

namespace {

using hopper::element;
namespace ptx = hopper::ptx;

struct coords {
  int32_t c[5];
};

// The start of dynamic shared memory rounded up to 1024 bytes in the shared window, so that the
// swizzle pattern (a function of the address bits) is the documented one relative to the box.
__device__ uint8_t* aligned_smem(uint8_t* dyn) {
  const uint32_t a = ptx::smem_addr(dyn);
  return dyn + ((1024u - (a & 1023u)) & 1023u);
}

template <size_t... I>
__device__ void load(void* dst, const hopper::tensor_map& m, uint64_t* bar, const coords& c,
                     std::index_sequence<I...>) {
  ptx::cp_async_bulk_tensor_shared_cluster_global(dst, m, bar, c.c[I]...);
}
template <size_t... I>
__device__ void store(const hopper::tensor_map& m, const void* src, const coords& c, std::index_sequence<I...>) {
  ptx::cp_async_bulk_tensor_global_shared_cta(m, src, c.c[I]...);
}
template <size_t... I>
__device__ void multicast(void* dst, const hopper::tensor_map& m, uint64_t* bar, uint16_t mask, const coords& c,
                          std::index_sequence<I...>) {
  ptx::cp_async_bulk_tensor_shared_cluster_global_multicast(dst, m, bar, mask, c.c[I]...);
}

// One box into shared memory, then the raw shared-memory image out to `out`.
template <int Rank>
__global__ void load_box_kernel(const __grid_constant__ hopper::tensor_map m, uint8_t* out, coords c) {
  extern __shared__ uint8_t dyn[];
  __shared__ uint64_t bar;
  uint8_t* box = aligned_smem(dyn);
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init_release_cluster();  // the init is visible to the async proxy
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::prefetch_tensormap(m);
    (void)ptx::mbarrier_arrive_expect_tx(&bar, m.box_bytes());
    load(box, m, &bar, c, std::make_index_sequence<Rank>{});
  }
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
  }
  for (uint32_t i = threadIdx.x; i < m.box_bytes(); i += blockDim.x) out[i] = box[i];
}

// Generic writes of `image` into shared memory, fence.proxy.async, then one tensor store.
template <int Rank>
__global__ void store_box_kernel(const __grid_constant__ hopper::tensor_map m, const uint8_t* image, coords c) {
  extern __shared__ uint8_t dyn[];
  uint8_t* box = aligned_smem(dyn);
  for (uint32_t i = threadIdx.x; i < m.box_bytes(); i += blockDim.x) box[i] = image[i];
  ptx::fence_proxy_async_shared_cta();  // each writer, before the async proxy reads
  __syncthreads();
  if (threadIdx.x == 0) {
    store(m, box, c, std::make_index_sequence<Rank>{});
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group<0>();
  }
}

// Cluster of n CTAs: CTA rank r multicasts rows [(cluster*n + r) * box_rows, ...) into slice r of
// every CTA; each CTA then writes all n slices it received to out[blockIdx.x].
__global__ void multicast_kernel(const __grid_constant__ hopper::tensor_map m, uint8_t* out, uint32_t box_rows) {
  extern __shared__ uint8_t dyn[];
  __shared__ uint64_t bar;
  uint8_t* slices = aligned_smem(dyn);
  const uint32_t n = ptx::cluster_nctarank(), rank = ptx::cluster_ctarank();
  const uint32_t bytes = m.box_bytes();
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init_release_cluster();
  }
  // barrier.cluster: every peer's barrier exists before anyone multicasts into it.
  ptx::barrier_cluster_arrive_aligned();
  ptx::barrier_cluster_wait_aligned();
  if (threadIdx.x == 0) {
    (void)ptx::mbarrier_arrive_expect_tx(&bar, n * bytes);  // every peer's slice lands here
    const coords c{{0, int32_t((ptx::clusterid_x() * n + rank) * box_rows), 0, 0, 0}};
    multicast(slices + size_t(rank) * bytes, m, &bar, uint16_t((1u << n) - 1u), c, std::make_index_sequence<2>{});
  }
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
  }
  for (uint32_t i = threadIdx.x; i < n * bytes; i += blockDim.x) out[size_t(blockIdx.x) * n * bytes + i] = slices[i];
  // No CTA leaves while a peer's copy may still target it.
  ptx::barrier_cluster_arrive_aligned();
  ptx::barrier_cluster_wait_aligned();
}

// ---- the host model of one box -----------------------------------------------------------------

struct tensor_case {
  element type;
  std::vector<uint64_t> dims;     // elements, innermost first
  std::vector<uint64_t> strides;  // bytes, dims 1..rank-1
  std::vector<uint32_t> box;
  hopper::swizzle sw = hopper::swizzle::none;
  hopper::oob_fill fill = hopper::oob_fill::zeros;

  uint32_t rank() const { return uint32_t(dims.size()); }
  uint32_t esize() const { return hopper::element_bytes(type); }
  size_t global_bytes() const { return rank() == 1 ? dims[0] * esize() : strides.back() * dims.back(); }
  size_t box_elems() const {
    size_t n = 1;
    for (uint32_t b : box) n *= b;
    return n;
  }
  hopper::tensor_map map(const void* base) const {
    return hopper::tensor_map::tiled(type, base)
        .dims(dims)
        .strides(strides)
        .box(box)
        .swizzle(sw)
        .oob_fill(fill)
        .build();
  }
};

// Calls f(smem_offset_before_swizzle, global_offset or -1 if out of bounds) for every box element.
template <class F>
void for_each_box_element(const tensor_case& t, const coords& c, F&& f) {
  const uint32_t r = t.rank();
  std::vector<uint32_t> i(r, 0);
  for (size_t e = 0; e < t.box_elems(); ++e) {
    size_t lin = 0;
    for (int k = int(r) - 1; k >= 0; --k) lin = lin * t.box[k] + i[k];
    bool in = true;
    long long g = 0;
    for (uint32_t k = 0; k < r; ++k) {
      const long long gk = (long long)c.c[k] + i[k];
      if (gk < 0 || gk >= (long long)t.dims[k]) in = false;
      g += gk * (long long)(k == 0 ? t.esize() : t.strides[k - 1]);
    }
    f(lin * t.esize(), in ? g : -1LL);
    for (uint32_t k = 0; k < r && ++i[k] == t.box[k]; ++k) i[k] = 0;
  }
}

std::vector<uint8_t> random_bytes(size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

template <int R>
cudaError_t launch_load(const hopper::tensor_map& m, uint8_t* out, const coords& c, size_t smem) {
  load_box_kernel<R><<<1, 128, smem>>>(m, out, c);
  return cudaGetLastError();
}
cudaError_t launch_load_rank(uint32_t r, const hopper::tensor_map& m, uint8_t* out, const coords& c) {
  const size_t smem = m.box_bytes() + 1024;
  switch (r) {
    case 1:
      return launch_load<1>(m, out, c, smem);
    case 2:
      return launch_load<2>(m, out, c, smem);
    case 3:
      return launch_load<3>(m, out, c, smem);
    case 4:
      return launch_load<4>(m, out, c, smem);
    default:
      return launch_load<5>(m, out, c, smem);
  }
}
template <int R>
cudaError_t launch_store(const hopper::tensor_map& m, const uint8_t* image, const coords& c, size_t smem) {
  store_box_kernel<R><<<1, 128, smem>>>(m, image, c);
  return cudaGetLastError();
}
cudaError_t launch_store_rank(uint32_t r, const hopper::tensor_map& m, const uint8_t* image, const coords& c) {
  const size_t smem = m.box_bytes() + 1024;
  switch (r) {
    case 1:
      return launch_store<1>(m, image, c, smem);
    case 2:
      return launch_store<2>(m, image, c, smem);
    case 3:
      return launch_store<3>(m, image, c, smem);
    case 4:
      return launch_store<4>(m, image, c, smem);
    default:
      return launch_store<5>(m, image, c, smem);
  }
}

// Loads one box at `c` and compares the shared-memory image with the model's.
void check_load(const tensor_case& t, const coords& c) {
  SCOPED_TRACE(testing::Message() << "rank " << t.rank() << " " << hopper::element_name(t.type) << " swizzle "
                                  << int(t.sw) << " coords " << c.c[0] << "," << c.c[1] << "," << c.c[2] << ","
                                  << c.c[3] << "," << c.c[4] << " seed " << hopper_test::fresh_seed());
  std::mt19937_64 rng(hopper_test::fresh_seed() + t.rank() * 131 + uint64_t(t.sw) * 7 + uint64_t(c.c[0] + 1000));
  const std::vector<uint8_t> src = random_bytes(t.global_bytes(), rng);
  uint8_t *d_src = nullptr, *d_out = nullptr;
  CUDA_OK(cudaMalloc(&d_src, src.size()));
  const hopper::tensor_map m = t.map(d_src);
  ASSERT_EQ(m.box_bytes(), t.box_elems() * t.esize());
  CUDA_OK(cudaMalloc(&d_out, m.box_bytes()));
  CUDA_OK(cudaMemcpy(d_src, src.data(), src.size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d_out, 0xA5, m.box_bytes()));
  CUDA_OK(launch_load_rank(t.rank(), m, d_out, c));
  CUDA_LAUNCH_OK();
  std::vector<uint8_t> got(m.box_bytes());
  CUDA_OK(cudaMemcpy(got.data(), d_out, got.size(), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(d_src));
  CUDA_OK(cudaFree(d_out));

  size_t oob = 0, bad = 0;
  for_each_box_element(t, c, [&](size_t lin, long long g) {
    const size_t at = hopper::swizzle_offset(t.sw, uint32_t(lin));
    if (g < 0) {
      ++oob;
      if (t.fill == hopper::oob_fill::nan_request_zero_fma) {
        float f;
        std::memcpy(&f, got.data() + at, 4);
        if (!std::isnan(f) && bad++ < 5) ADD_FAILURE() << "OOB element at smem " << at << " is " << f << ", not NaN";
      } else {
        for (uint32_t b = 0; b < t.esize(); ++b)
          if (got[at + b] != 0 && bad++ < 5) ADD_FAILURE() << "OOB byte at smem " << at + b << " is not zero";
      }
    } else {
      for (uint32_t b = 0; b < t.esize(); ++b)
        if (got[at + b] != src[size_t(g) + b] && bad++ < 5)
          ADD_FAILURE() << "smem byte " << at + b << " (box offset " << lin + b << ") = " << int(got[at + b])
                        << ", global byte " << g + b << " = " << int(src[size_t(g) + b]);
    }
  });
  EXPECT_EQ(bad, 0u);
  (void)oob;
}

// Rank 1-5, several element types, padded strides, boxes inside, across the far edge and before
// the near edge (negative coordinates). The box origin along dim 0 is a multiple of 16 bytes:
// the H200 traps ("illegal instruction") on any other origin, in or out of bounds.
TEST(TmaTensorLoad, EveryRankMatchesTheModel) {
  HOPPER_REQUIRE_SM90();
  const tensor_case r1{element::u8, {1000}, {}, {64}};
  check_load(r1, {{0}});
  check_load(r1, {{960}});  // 40 in bounds, 24 past the end
  check_load(r1, {{-16}});  // 16 before the start
  const tensor_case r2{element::bf16, {37, 50}, {96}, {16, 8}};
  check_load(r2, {{0, 0}});
  check_load(r2, {{24, 45}});
  check_load(r2, {{-8, -3}});
  const tensor_case r3{element::f32, {20, 6, 7}, {96, 96 * 6 + 32}, {8, 4, 3}};
  check_load(r3, {{4, 1, 2}});
  check_load(r3, {{16, 4, 5}});
  const tensor_case r4{element::s32, {8, 3, 4, 5}, {48, 160, 640}, {4, 2, 3, 2}};
  check_load(r4, {{4, 0, 1, 1}});
  check_load(r4, {{4, 2, 2, 4}});
  const tensor_case r5{element::f16, {16, 3, 2, 3, 4}, {32, 96, 192, 576}, {8, 2, 2, 2, 3}};
  check_load(r5, {{0, 0, 0, 0, 0}});
  check_load(r5, {{8, 2, 1, 2, 2}});
  for (element t : {element::e4m3, element::e5m2, element::s8, element::u8}) {
    const tensor_case c{t, {100, 9}, {112}, {32, 4}};
    check_load(c, {{80, 7}});
  }
}

TEST(TmaTensorLoad, EverySwizzleModeLaysOutChunkXorRow) {
  HOPPER_REQUIRE_SM90();
  for (hopper::swizzle sw : {hopper::swizzle::b32, hopper::swizzle::b64, hopper::swizzle::b128}) {
    const uint32_t span = hopper::swizzle_bytes(sw);
    for (element t : {element::bf16, element::f32, element::u8}) {
      const uint32_t inner = span / hopper::element_bytes(t);  // one box row = one swizzle span
      tensor_case c{t, {inner * 3, 40}, {inner * 3 * hopper::element_bytes(t)}, {inner, 16}, sw};
      check_load(c, {{int32_t(inner), 8}});
      check_load(c, {{int32_t(inner * 2 + inner / 2), 30}});  // half the row and 6 rows outside
    }
    const uint32_t inner = span / 2;
    tensor_case c3{element::bf16, {inner, 6, 5}, {span, span * 6}, {inner, 4, 3}, sw};
    check_load(c3, {{0, 3, 3}});
  }
}

TEST(TmaTensorLoad, NanFillMarksOutOfBoundsFloats) {
  HOPPER_REQUIRE_SM90();
  tensor_case c{element::f32, {24, 10}, {96}, {16, 8}};
  c.fill = hopper::oob_fill::nan_request_zero_fma;
  check_load(c, {{16, 6}});
  check_load(c, {{-4, -1}});
}

// Writes an image of the box with generic stores, tensor-stores it at `c`, and checks that exactly
// the in-bounds elements of the box changed in global memory.
void check_store(const tensor_case& t, const coords& c) {
  SCOPED_TRACE(testing::Message() << "store rank " << t.rank() << " swizzle " << int(t.sw) << " coords " << c.c[0]
                                  << "," << c.c[1] << "," << c.c[2] << " seed " << hopper_test::fresh_seed());
  std::mt19937_64 rng(hopper_test::fresh_seed() * 3 + t.rank());
  const size_t box_bytes = t.box_elems() * t.esize();
  const std::vector<uint8_t> image = random_bytes(box_bytes, rng);
  std::vector<uint8_t> want(t.global_bytes(), 0x5A);
  uint8_t *d_dst = nullptr, *d_image = nullptr;
  CUDA_OK(cudaMalloc(&d_dst, want.size()));
  CUDA_OK(cudaMalloc(&d_image, box_bytes));
  const hopper::tensor_map m = t.map(d_dst);
  CUDA_OK(cudaMemset(d_dst, 0x5A, want.size()));
  CUDA_OK(cudaMemcpy(d_image, image.data(), box_bytes, cudaMemcpyHostToDevice));
  CUDA_OK(launch_store_rank(t.rank(), m, d_image, c));
  CUDA_LAUNCH_OK();
  std::vector<uint8_t> got(want.size());
  CUDA_OK(cudaMemcpy(got.data(), d_dst, got.size(), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(d_dst));
  CUDA_OK(cudaFree(d_image));
  size_t written = 0;
  for_each_box_element(t, c, [&](size_t lin, long long g) {
    if (g < 0) return;
    ++written;
    std::memcpy(want.data() + g, image.data() + hopper::swizzle_offset(t.sw, uint32_t(lin)), t.esize());
  });
  ASSERT_GT(written, 0u);
  // Measured on the H200 (docs/gpu_runs.md): where a row ends inside a 16-byte chunk
  // (dims[0] * element size not a multiple of 16), a store clipped at that end also writes the
  // rest of the chunk. Those bytes, in the rows the box wrote, may hold either value; every other
  // byte must be exactly as expected.
  const size_t row_bytes = t.dims[0] * t.esize(), row_chunk_end = (row_bytes + 15) / 16 * 16;
  const size_t pitch = t.rank() == 1 ? want.size() : t.strides[0];
  std::set<size_t> rows_written;
  for_each_box_element(t, c, [&](size_t, long long g) {
    if (g >= 0) rows_written.insert(size_t(g) / pitch);
  });
  size_t granule_bytes = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool in_last_chunk = i % pitch >= row_bytes && i % pitch < row_chunk_end && rows_written.count(i / pitch);
    if (in_last_chunk && got[i] != want[i]) {
      ++granule_bytes;
      continue;
    }
    ASSERT_EQ(got[i], want[i]) << "global byte " << i
                               << (want[i] == 0x5A ? " should be untouched" : " should be stored");
  }
  if (granule_bytes) std::printf("store wrote %zu bytes past a row end inside its last 16-byte chunk\n", granule_bytes);
}

TEST(TmaTensorStore, ClipsAtTheEdgesAndUnswizzles) {
  HOPPER_REQUIRE_SM90();
  check_store(tensor_case{element::u8, {1000}, {}, {64}}, {{960}});
  check_store(tensor_case{element::bf16, {37, 50}, {96}, {16, 8}}, {{8, 4}});
  check_store(tensor_case{element::bf16, {37, 50}, {96}, {16, 8}}, {{24, 45}});
  check_store(tensor_case{element::f32, {20, 6, 7}, {96, 96 * 6 + 32}, {8, 4, 3}}, {{16, 4, 5}});
  check_store(tensor_case{element::s32, {8, 3, 4, 5}, {48, 160, 640}, {4, 2, 3, 2}}, {{4, 2, 2, 4}});
  check_store(tensor_case{element::f16, {16, 3, 2, 3, 4}, {32, 96, 192, 576}, {8, 2, 2, 2, 3}}, {{8, 2, 1, 2, 2}});
  for (hopper::swizzle sw : {hopper::swizzle::b32, hopper::swizzle::b64, hopper::swizzle::b128}) {
    const uint32_t inner = hopper::swizzle_bytes(sw) / 2;
    check_store(tensor_case{element::bf16, {inner * 2, 40}, {inner * 4}, {inner, 16}, sw}, {{int32_t(inner), 28}});
  }
}

// Every map these tests use passes validation and the driver encodes it: the validator has no gap
// for them. Then a few raw driver calls print what the driver itself does with rank 1 (no stride,
// yet the driver takes a stride array) and with overlapping strides, for the documentation.
TEST(TensorMapDriver, EncodesEveryMapTheValidatorAccepts) {
  HOPPER_REQUIRE_SM90();
  uint8_t* d = nullptr;
  CUDA_OK(cudaMalloc(&d, 1 << 20));
  const std::vector<tensor_case> cases = {
      {element::u8, {1000}, {}, {64}},
      {element::bf16, {37, 50}, {96}, {16, 8}},
      {element::f32, {20, 6, 7}, {96, 96 * 6 + 32}, {8, 4, 3}},
      {element::s32, {8, 3, 4, 5}, {48, 160, 640}, {4, 2, 3, 2}},
      {element::f16, {16, 3, 2, 3, 4}, {32, 96, 192, 576}, {8, 2, 2, 2, 3}},
      {element::e4m3, {100, 9}, {112}, {32, 4}},
      {element::bf16, {64, 40}, {128}, {16, 16}, hopper::swizzle::b32},
  };
  for (const tensor_case& t : cases) {
    try {
      (void)t.map(d);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  const hopper::encode_tiled_fn enc = hopper::driver_encode_tiled();
  auto probe = [&](const char* what, CUtensorMapDataType type, uint32_t rank, const cuuint64_t* dims,
                   const cuuint64_t* strides, const cuuint32_t* box) {
    alignas(128) CUtensorMap m;
    const cuuint32_t es[5] = {1, 1, 1, 1, 1};
    const CUresult r =
        enc(&m, type, rank, d, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    std::printf("PROBE cuTensorMapEncodeTiled %s -> %d\n", what, int(r));
    return r;
  };
  const cuuint64_t d1000[] = {1000}, d1024[] = {1024}, s1000[] = {1000}, s1008[] = {1008}, s1024[] = {1024};
  const cuuint32_t b64[] = {64};
  probe("rank1 u8 dims{1000} strides=null", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, d1000, nullptr, b64);
  probe("rank1 u8 dims{1024} strides=null", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, d1024, nullptr, b64);
  probe("rank1 u8 dims{1000} strides{1000}", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, d1000, s1000, b64);
  probe("rank1 u8 dims{1000} strides{1008}", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, d1000, s1008, b64);
  probe("rank1 u8 dims{1024} strides{1024}", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, d1024, s1024, b64);
  const cuuint64_t d2[] = {20, 6}, s64[] = {64}, s96[] = {96};
  const cuuint32_t b2[] = {8, 2};
  probe("rank2 f32 dims{20,6} strides{64} (overlap)", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d2, s64, b2);
  probe("rank2 f32 dims{20,6} strides{96}", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d2, s96, b2);
  const cuuint64_t d3[] = {37, 50};
  const cuuint32_t b3[] = {16, 8};
  probe("rank2 bf16 dims{37,50} strides{96}", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d3, s96, b3);
  CUDA_OK(cudaFree(d));
}

// Multicast into every CTA of clusters of 2 and 4 (two clusters each): every CTA must hold every
// peer's slice.
void check_multicast(uint32_t n) {
  SCOPED_TRACE(testing::Message() << "cluster of " << n << " seed " << hopper_test::fresh_seed());
  const uint32_t clusters = 2, box_rows = 8, width = 64;  // f32 rows of 256 bytes
  const uint32_t rows = clusters * n * box_rows;
  std::mt19937_64 rng(hopper_test::fresh_seed() + n);
  const std::vector<uint8_t> src = random_bytes(size_t(rows) * width * 4, rng);
  uint8_t *d_src = nullptr, *d_out = nullptr;
  CUDA_OK(cudaMalloc(&d_src, src.size()));
  const hopper::tensor_map m =
      hopper::tensor_map::tiled(element::f32, d_src).dims({width, rows}).box({width, box_rows}).build();
  const size_t per_cta = size_t(n) * m.box_bytes();
  const size_t out_bytes = per_cta * clusters * n;
  CUDA_OK(cudaMalloc(&d_out, out_bytes));
  CUDA_OK(cudaMemcpy(d_src, src.data(), src.size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d_out, 0xA5, out_bytes));
  const size_t smem = per_cta + 1024;
  CUDA_OK(cudaFuncSetAttribute(multicast_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  cudaLaunchConfig_t lc{};
  lc.gridDim = dim3(clusters * n);
  lc.blockDim = dim3(128);
  lc.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = n;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  lc.attrs = attr;
  lc.numAttrs = 1;
  CUDA_OK(cudaLaunchKernelEx(&lc, multicast_kernel, m, d_out, box_rows));
  CUDA_LAUNCH_OK();
  std::vector<uint8_t> got(out_bytes);
  CUDA_OK(cudaMemcpy(got.data(), d_out, out_bytes, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(d_src));
  CUDA_OK(cudaFree(d_out));
  for (uint32_t cta = 0; cta < clusters * n; ++cta) {
    // Slice j of every CTA in cluster c holds rows (c*n + j) * box_rows ..: all n slices, in order.
    const size_t cluster_first = size_t(cta / n) * n * m.box_bytes();
    const int diff = std::memcmp(got.data() + cta * per_cta, src.data() + cluster_first, per_cta);
    EXPECT_EQ(diff, 0) << "CTA " << cta << " (rank " << cta % n << ") did not receive every peer's slice";
  }
}

TEST(TmaTensorMulticast, ReachesEveryCtaOfClustersOf2And4) {
  HOPPER_REQUIRE_SM90();
  check_multicast(2);
  check_multicast(4);
}

}  // namespace
