// hopper::tensor_map: a validated, encoded CUtensorMap for cp.async.bulk.tensor (TMA).
//
// Host side is plain C++ over the CUDA runtime and driver *types*; cuTensorMapEncodeTiled is
// obtained through cudaGetDriverEntryPointByVersion so that users need not link libcuda.
// Every rule cuTensorMapEncodeTiled documents (and a few it leaves to silent misbehaviour) is
// checked before the driver is called, and a violation throws std::invalid_argument naming the
// bad value, because the driver itself only answers CUDA_ERROR_INVALID_VALUE.
//
// Dimensions are listed innermost first (dims[0] is contiguous), as the driver and PTX do.
#pragma once

#include <cuda.h>              // CUtensorMap and its enums: types only, no libcuda needed
#include <cuda_runtime_api.h>  // cudaGetDriverEntryPointByVersion

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hopper/hd.hpp"
#include "hopper/objects/checked.hpp"
#include "hopper/objects/limits.hpp"
#include "hopper/objects/swizzle.hpp"

namespace hopper {

// Element types a Hopper kernel moves with TMA. fp8 and int8 travel as UINT8: the copy engine
// only needs the width, and OOB NaN fill is then (correctly) unavailable to them. Every swizzle
// takes every one of these types; the driver's per-type swizzle limits concern only the packed
// sub-byte types (16U4, 16U6), which are deliberately not offered. What an element type
// forbids here is the NaN fill (integers, fp8) and inner rows not a multiple of 16 bytes.
enum class element : std::uint8_t { u8, s8, e4m3, e5m2, f16, bf16, f32, s32 };

// Interleaved layouts (NC/8HWC8 with 16-byte, NC/16HWC16 with 32-byte channel groups).
enum class interleave : std::uint8_t { none, b16, b32 };
// Granularity at which L2 fills a request from DRAM.
enum class l2_promotion : std::uint8_t { none, b64, b128, b256 };
// Out-of-bounds elements: zeros, or the NaN that makes an FMA consume them as zero (float only).
enum class oob_fill : std::uint8_t { zeros, nan_request_zero_fma };

inline constexpr std::uint32_t element_bytes(element e) {
  switch (e) {
    case element::f16:
    case element::bf16:
      return 2;
    case element::f32:
    case element::s32:
      return 4;
    default:
      return 1;
  }
}

inline const char* element_name(element e) {
  switch (e) {
    case element::u8:
      return "u8";
    case element::s8:
      return "s8";
    case element::e4m3:
      return "e4m3";
    case element::e5m2:
      return "e5m2";
    case element::f16:
      return "f16";
    case element::bf16:
      return "bf16";
    case element::f32:
      return "f32";
    case element::s32:
      return "s32";
  }
  return "?";
}

inline constexpr bool element_is_float(element e) {
  // fp8 counts as not float here: it is encoded as UINT8, which the driver treats as integer.
  return e == element::f16 || e == element::bf16 || e == element::f32;
}

inline CUtensorMapDataType to_cu(element e) {
  switch (e) {
    case element::f16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case element::bf16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case element::f32:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case element::s32:
      return CU_TENSOR_MAP_DATA_TYPE_INT32;
    default:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
}

class tensor_map_builder;

// An encoded tiled tensor map plus the one figure a kernel needs with it: the bytes one box
// writes to shared memory (the mbarrier transaction count of one load). Pass it to a kernel as
// `const __grid_constant__ hopper::tensor_map` so the map stays in parameter space, where
// cp.async.bulk.tensor may read it by generic address.
struct alignas(128) tensor_map {
  CUtensorMap raw;  // first member: &map == &map.raw, which is what PTX takes
  std::uint32_t box_bytes_;
  std::uint32_t rank_;

  // Bytes written to shared memory by one box load (complete_tx count), OOB fill included.
  HOPPER_HD std::uint32_t box_bytes() const { return box_bytes_; }
  HOPPER_HD std::uint32_t rank() const { return rank_; }
  HOPPER_HD const CUtensorMap* get() const { return &raw; }
  // The encoded map itself: what the PTX layer's cp.async.bulk.tensor functions take
  // (hopper/ptx/cp_async_bulk_tensor.cuh), so a tensor_map passes where a CUtensorMap is asked.
  HOPPER_HD operator const CUtensorMap&() const { return raw; }

  // Start describing a tiled map of `type` elements at `base` (a device address).
  static tensor_map_builder tiled(element type, const void* base);
};

// The signature of cuTensorMapEncodeTiled as of CUDA 12.0 (cudaTypedefs.h's _v12000 form).
using encode_tiled_fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                     const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled from the driver the runtime loaded; throws std::runtime_error if absent.
inline encode_tiled_fn driver_encode_tiled() {
  static const encode_tiled_fn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || p == nullptr) {
      (void)cudaGetLastError();
      return encode_tiled_fn{nullptr};
    }
    return reinterpret_cast<encode_tiled_fn>(p);
  }();
  if (!fn)
    throw std::runtime_error(
        "hopper::tensor_map: cuTensorMapEncodeTiled not available from the CUDA driver "
        "(cudaGetDriverEntryPointByVersion failed: no driver, or older than CUDA 12.0)");
  return fn;
}

// Describes one tiled map, checks it against every rule of cuTensorMapEncodeTiled, encodes it.
class tensor_map_builder {
 public:
  tensor_map_builder(element type, const void* base) : type_(type), base_(base) {}

  // Global extent in elements, innermost first; its length is the rank (1..5).
  tensor_map_builder& dims(std::initializer_list<std::uint64_t> d) { return dims(std::vector<std::uint64_t>(d)); }
  tensor_map_builder& dims(std::vector<std::uint64_t> d) {
    dims_ = std::move(d);
    return *this;
  }
  // Byte strides of dims 1..rank-1 (rank-1 values). Unset: densely packed from dims.
  tensor_map_builder& strides(std::initializer_list<std::uint64_t> s) { return strides(std::vector<std::uint64_t>(s)); }
  tensor_map_builder& strides(std::vector<std::uint64_t> s) {
    strides_ = std::move(s);
    strides_set_ = true;
    return *this;
  }
  // Box (tile) extent in elements, one per dimension, each 1..256.
  tensor_map_builder& box(std::initializer_list<std::uint32_t> b) { return box(std::vector<std::uint32_t>(b)); }
  tensor_map_builder& box(std::vector<std::uint32_t> b) {
    box_ = std::move(b);
    return *this;
  }
  // Traversal step per dimension, each 1..8. Unset: all 1.
  tensor_map_builder& element_strides(std::initializer_list<std::uint32_t> e) {
    return element_strides(std::vector<std::uint32_t>(e));
  }
  tensor_map_builder& element_strides(std::vector<std::uint32_t> e) {
    estrides_ = std::move(e);
    return *this;
  }
  tensor_map_builder& swizzle(hopper::swizzle s) {
    swizzle_ = s;
    return *this;
  }
  tensor_map_builder& interleave(hopper::interleave i) {
    interleave_ = i;
    return *this;
  }
  tensor_map_builder& l2_promotion(hopper::l2_promotion p) {
    l2_ = p;
    return *this;
  }
  tensor_map_builder& oob_fill(hopper::oob_fill f) {
    oob_ = f;
    return *this;
  }

  std::uint32_t rank() const { return static_cast<std::uint32_t>(dims_.size()); }

  // Byte strides as they will be encoded (packed ones derived when none were given).
  std::vector<std::uint64_t> global_strides() const {
    if (strides_set_) return strides_;
    std::vector<std::uint64_t> s;
    std::uint64_t run = element_bytes(type_);
    for (std::size_t i = 0; i + 1 < dims_.size(); ++i) {
      // Saturates instead of wrapping: a product past 2^64 fails validate()'s 2^40 bound as such.
      run = dims_[i] != 0 && run > UINT64_MAX / dims_[i] ? UINT64_MAX : run * dims_[i];
      s.push_back(run);
    }
    return s;
  }

  // Bytes one box writes to shared memory: along dim i ceil(box[i] / estride[i]) elements
  // (dim 0 ignores its stride without interleave), OOB-filled elements included.
  std::uint64_t box_bytes() const {
    std::uint64_t n = element_bytes(type_);
    for (std::size_t i = 0; i < box_.size(); ++i) {
      const std::uint32_t es =
          (i < estrides_.size() && !(i == 0 && interleave_ == hopper::interleave::none)) ? estrides_[i] : 1u;
      n *= (box_[i] + es - 1) / es;
    }
    return n;
  }

  // Throws std::invalid_argument naming the first value the driver would reject (or that
  // would silently misbehave). Needs no GPU.
  void validate() const {
    const std::uint32_t r = rank();
    const std::uint32_t eb = element_bytes(type_);
    const auto addr = reinterpret_cast<std::uintptr_t>(base_);
    const bool il = interleave_ != hopper::interleave::none;
    if (static_cast<unsigned>(type_) > static_cast<unsigned>(element::s32))
      fail("element type value " + std::to_string(unsigned(type_)) + " is not a hopper::element");
    if (static_cast<unsigned>(swizzle_) > 3u)
      fail("swizzle value " + std::to_string(unsigned(swizzle_)) + " is not a hopper::swizzle");
    if (static_cast<unsigned>(interleave_) > 2u)
      fail("interleave value " + std::to_string(unsigned(interleave_)) + " is not a hopper::interleave");
    if (static_cast<unsigned>(l2_) > 3u)
      fail("l2_promotion value " + std::to_string(unsigned(l2_)) + " is not a hopper::l2_promotion");
    if (static_cast<unsigned>(oob_) > 1u)
      fail("oob_fill value " + std::to_string(unsigned(oob_)) + " is not a hopper::oob_fill");
    if (r < 1 || r > 5)
      fail("rank = " + std::to_string(r) + " (dims has " + std::to_string(r) + " entries) is out of range 1..5");
    if (il && r < 3) fail("rank = " + std::to_string(r) + " with interleave " + il_name() + " must be >= 3");
    if (base_ == nullptr) fail("global address is null");
    const std::uint32_t align = interleave_ == hopper::interleave::b32 ? 32u : 16u;
    if (addr % align != 0)
      fail("global address " + hex(addr) + " is not " + std::to_string(align) + "-byte aligned" +
           (align == 32 ? " (interleave b32 needs 32)" : ""));
    for (std::uint32_t i = 0; i < r; ++i)
      if (dims_[i] < 1 || dims_[i] > (std::uint64_t(1) << 32))
        fail("dims[" + std::to_string(i) + "] = " + std::to_string(dims_[i]) + " is out of range 1..2^32");
    const std::vector<std::uint64_t> gs = global_strides();
    if (gs.size() != r - 1)
      fail("strides has " + std::to_string(gs.size()) + " entries; rank " + std::to_string(r) + " needs " +
           std::to_string(r - 1) + " (byte strides of dims 1..rank-1)");
    const std::uint32_t smul = interleave_ == hopper::interleave::b32 ? 32u : 16u;
    // A stride the caller gave is named as given; one derived from packed dims says so, and how.
    auto stride_name = [&](std::uint32_t i) {
      if (strides_set_) return "strides[" + std::to_string(i) + "]";
      std::string p = "the packed stride of dim " + std::to_string(i + 1) + " (no strides given: dims[0]";
      for (std::uint32_t k = 1; k <= i; ++k) p += " x dims[" + std::to_string(k) + "]";
      return p + " x " + std::to_string(eb) + "-byte elements)";
    };
    auto bytes_str = [](std::uint64_t v) {
      return v == UINT64_MAX ? std::string("more than 2^64") : std::to_string(v);
    };
    for (std::uint32_t i = 0; i + 1 < r; ++i) {
      if (gs[i] >= (std::uint64_t(1) << 40))
        fail(stride_name(i) + " = " + bytes_str(gs[i]) + " bytes is not below 2^40");
      if (gs[i] == 0 || gs[i] % smul != 0)
        fail(stride_name(i) + " = " + std::to_string(gs[i]) + " bytes" +
             (strides_set_ ? " (dim " + std::to_string(i + 1) + ")" : std::string()) +
             " is not a non-zero multiple of " + std::to_string(smul));
      // The driver's layout rule: each dimension's stride spans the whole dimension below it.
      // Computed without wrapping: 2^39 x 2^32 must not pass as 0.
      const std::optional<std::uint64_t> below =
          i == 0 ? checked::mul(dims_[0], std::uint64_t(eb)) : checked::mul(gs[i - 1], dims_[i]);
      if (!below || gs[i] < *below)
        fail("strides[" + std::to_string(i) + "] = " + std::to_string(gs[i]) + " bytes is smaller than the " +
             (below ? std::to_string(*below) : std::string("more than 2^64")) + " bytes of " +
             (i == 0 ? "dims[0] x element size"
                     : "strides[" + std::to_string(i - 1) + "] x dims[" + std::to_string(i) + "]") +
             " (dimensions may not overlap)");
    }
    if (box_.size() != r) fail("box has " + std::to_string(box_.size()) + " entries; rank is " + std::to_string(r));
    for (std::uint32_t i = 0; i < r; ++i)
      if (box_[i] < 1 || box_[i] > 256)
        fail("box[" + std::to_string(i) + "] = " + std::to_string(box_[i]) + " is out of range 1..256");
    if (!estrides_.empty() && estrides_.size() != r)
      fail("element_strides has " + std::to_string(estrides_.size()) + " entries; rank is " + std::to_string(r));
    for (std::size_t i = 0; i < estrides_.size(); ++i)
      if (estrides_[i] < 1 || estrides_[i] > 8)
        fail("element_strides[" + std::to_string(i) + "] = " + std::to_string(estrides_[i]) + " is out of range 1..8");
    if (!il && !estrides_.empty() && estrides_[0] != 1)
      fail("element_strides[0] = " + std::to_string(estrides_[0]) +
           " would be ignored by the hardware without interleave; it must be 1");
    const std::uint64_t row = std::uint64_t(box_[0]) * eb;
    if (!il && row % 16 != 0)
      fail("inner box row box[0] * " + std::to_string(eb) + " B = " + std::to_string(row) +
           " bytes is not a multiple of 16");
    if (interleave_ == hopper::interleave::b32 && swizzle_ != hopper::swizzle::b32)
      fail("swizzle " + sw_name() + " with interleave b32: that interleave takes only swizzle b32");
    if (!il && swizzle_ != hopper::swizzle::none && row > swizzle_bytes(swizzle_))
      fail("inner box row box[0] * " + std::to_string(eb) + " B = " + std::to_string(row) +
           " bytes exceeds the swizzle span of " + std::to_string(swizzle_bytes(swizzle_)) + " (" + sw_name() + ")");
    if (oob_ == hopper::oob_fill::nan_request_zero_fma && !element_is_float(type_))
      fail("oob_fill nan_request_zero_fma with element type " + std::string(element_name(type_)) +
           ": NaN fill needs f16, bf16 or f32");
    // Beyond the driver: a box that cannot fit in shared memory would fail only at launch.
    if (box_bytes() > limits::max_smem_per_block)
      fail("box of " + std::to_string(box_bytes()) + " bytes exceeds the " +
           std::to_string(limits::max_smem_per_block) + " bytes (" + std::to_string(limits::max_smem_per_block / 1024) +
           " KiB) of shared memory a block may have");
  }

  // Validates, then encodes through the driver (needs a CUDA driver; a thread without a current
  // context gets its device's primary context, as on its first runtime call).
  tensor_map build() const {
    validate();
    std::vector<cuuint64_t> gd(dims_.begin(), dims_.end());
    std::vector<cuuint64_t> gs;
    for (std::uint64_t s : global_strides()) gs.push_back(s);
    // Rank 1 has no stride, but the driver still reads globalStrides[0] and applies the stride
    // rules to it: pass the row rounded up to 16 bytes rather than a null array.
    if (gs.empty()) gs.push_back((dims_[0] * element_bytes(type_) + 15) / 16 * 16);
    std::vector<cuuint32_t> bd(box_.begin(), box_.end());
    std::vector<cuuint32_t> es(rank(), 1u);
    for (std::size_t i = 0; i < estrides_.size(); ++i) es[i] = estrides_[i];
    tensor_map m{};
    const auto encode = [&] {
      return driver_encode_tiled()(&m.raw, to_cu(type_), rank(), const_cast<void*>(base_), gd.data(), gs.data(),
                                   bd.data(), es.data(), static_cast<CUtensorMapInterleave>(interleave_),
                                   static_cast<CUtensorMapSwizzle>(swizzle_), static_cast<CUtensorMapL2promotion>(l2_),
                                   static_cast<CUtensorMapFloatOOBfill>(oob_));
    };
    CUresult res = encode();
    // The driver encodes within a current context, which a host thread that has made no runtime
    // call yet does not have: make the runtime's current device's primary context current (what
    // the thread's first runtime call would do), then encode again.
    if (res == CUDA_ERROR_INVALID_CONTEXT) {
      int dev = 0;
      if (cudaGetDevice(&dev) == cudaSuccess && cudaSetDevice(dev) == cudaSuccess)
        res = encode();
      else
        (void)cudaGetLastError();
    }
    if (res != CUDA_SUCCESS)
      throw std::runtime_error("hopper::tensor_map: cuTensorMapEncodeTiled returned CUresult " +
                               std::to_string(int(res)) + " (" + result_name(res) +
                               ") for a map that passed validation: " + describe(gs, es));
    m.box_bytes_ = static_cast<std::uint32_t>(box_bytes());
    m.rank_ = rank();
    return m;
  }

 private:
  [[noreturn]] static void fail(const std::string& what) { throw std::invalid_argument("hopper::tensor_map: " + what); }
  static std::string hex(std::uintptr_t v) {
    static const char* d = "0123456789abcdef";
    std::string s;
    do {
      s.insert(s.begin(), d[v & 15]);
      v >>= 4;
    } while (v);
    return "0x" + s;
  }
  static std::string result_name(CUresult r) {
    switch (r) {
      case CUDA_ERROR_INVALID_VALUE:
        return "CUDA_ERROR_INVALID_VALUE";
      case CUDA_ERROR_NOT_INITIALIZED:
        return "CUDA_ERROR_NOT_INITIALIZED";
      case CUDA_ERROR_DEINITIALIZED:
        return "CUDA_ERROR_DEINITIALIZED";
      case CUDA_ERROR_INVALID_CONTEXT:
        return "CUDA_ERROR_INVALID_CONTEXT";
      case CUDA_ERROR_NOT_SUPPORTED:
        return "CUDA_ERROR_NOT_SUPPORTED";
      default:
        return "CUresult " + std::to_string(int(r));
    }
  }
  template <class T>
  static std::string list(const std::vector<T>& v) {
    std::string s = "{";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "}";
  }
  static const char* l2_name(hopper::l2_promotion p) {
    static const char* n[] = {"none", "b64", "b128", "b256"};
    return static_cast<unsigned>(p) < 4 ? n[unsigned(p)] : "?";
  }

 public:
  // Every parameter as it goes to the driver (strides and element strides as passed).
  std::string describe(const std::vector<cuuint64_t>& gs, const std::vector<cuuint32_t>& es) const {
    return std::string("type ") + element_name(type_) + ", rank " + std::to_string(rank()) + ", base " +
           hex(reinterpret_cast<std::uintptr_t>(base_)) + ", dims " + list(dims_) + ", strides " +
           list(std::vector<std::uint64_t>(gs.begin(), gs.end())) + ", box " + list(box_) + ", element strides " +
           list(std::vector<std::uint32_t>(es.begin(), es.end())) + ", swizzle " + sw_name() + ", interleave " +
           il_name() + ", l2 promotion " + l2_name(l2_) + ", oob fill " +
           (oob_ == hopper::oob_fill::zeros ? "zeros" : "nan_request_zero_fma");
  }

 private:
  std::string sw_name() const {
    static const char* n[] = {"none", "b32", "b64", "b128"};
    return static_cast<unsigned>(swizzle_) < 4 ? n[unsigned(swizzle_)] : "?";
  }
  std::string il_name() const {
    static const char* n[] = {"none", "b16", "b32"};
    return static_cast<unsigned>(interleave_) < 3 ? n[unsigned(interleave_)] : "?";
  }

  element type_;
  const void* base_;
  std::vector<std::uint64_t> dims_;
  std::vector<std::uint64_t> strides_;
  bool strides_set_ = false;
  std::vector<std::uint32_t> box_;
  std::vector<std::uint32_t> estrides_;
  hopper::swizzle swizzle_ = hopper::swizzle::none;
  hopper::interleave interleave_ = hopper::interleave::none;
  hopper::l2_promotion l2_ = hopper::l2_promotion::none;
  hopper::oob_fill oob_ = hopper::oob_fill::zeros;
};

inline tensor_map_builder tensor_map::tiled(element type, const void* base) { return tensor_map_builder(type, base); }

}  // namespace hopper
