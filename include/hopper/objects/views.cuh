// Typed views of device memory, as the device target hands them to a kernel body: a pointer into
// global memory (gmem), into this CTA's shared memory (smem), and the .shared::cluster address of
// a variable in a CTA of the cluster (dsmem, what mapa returns). Each holds one pointer or address
// and every member is the plain access it names, so a body written with them compiles to what the
// same body writes with raw pointers. The host model's views (hopper/model/target.hpp) have the
// same members and track every access instead.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hopper/ptx/cluster.cuh"
#include "hopper/ptx/common.cuh"

namespace hopper {

namespace detail {

template <class E>
class device_view {
 public:
  using element_type = E;
  using value_type = std::remove_cv_t<E>;

  device_view() = default;
  __host__ __device__ explicit device_view(E* p) : p_(p) {}

  __host__ __device__ E* get() const { return p_; }
  // Element i: an ordinary load (ld.global / ld.shared, or a generic ld the compiler resolves).
  __device__ __forceinline__ value_type load(size_t i) const { return p_[i]; }
  // Element i: a volatile load, issued as written and never merged with another.
  __device__ __forceinline__ value_type load_volatile(size_t i) const {
    return static_cast<const volatile value_type*>(p_)[i];
  }
  // Element i := v: an ordinary store.
  __device__ __forceinline__ void store(size_t i, const value_type& v) const {
    static_assert(!std::is_const<E>::value, "store through a view of const elements");
    p_[i] = v;
  }
  // Element i := v: a volatile store.
  __device__ __forceinline__ void store_volatile(size_t i, const value_type& v) const {
    static_assert(!std::is_const<E>::value, "store through a view of const elements");
    static_cast<volatile value_type*>(p_)[i] = v;
  }

 protected:
  E* p_ = nullptr;
};

}  // namespace detail

// A pointer into global memory.
template <class E>
class gmem : public detail::device_view<E> {
 public:
  using detail::device_view<E>::device_view;
  // The view `n` elements further on.
  __host__ __device__ gmem operator+(size_t n) const { return gmem(this->p_ + n); }
  // The same bytes as elements of U.
  template <class U>
  __host__ __device__ gmem<U> as() const {
    return gmem<U>(reinterpret_cast<U*>(const_cast<std::remove_cv_t<E>*>(this->p_)));
  }
  // A view of mutable elements is also a view of const ones.
  template <class U, class = std::enable_if_t<std::is_same<const U, E>::value && !std::is_const<U>::value>>
  __host__ __device__ gmem(const gmem<U>& o) : gmem(o.get()) {}
};

// A pointer into this CTA's shared memory.
template <class E>
class smem : public detail::device_view<E> {
 public:
  using detail::device_view<E>::device_view;
  __host__ __device__ smem operator+(size_t n) const { return smem(this->p_ + n); }
  template <class U>
  __host__ __device__ smem<U> as() const {
    return smem<U>(reinterpret_cast<U*>(const_cast<std::remove_cv_t<E>*>(this->p_)));
  }
  // A view of mutable elements is also a view of const ones.
  template <class U, class = std::enable_if_t<std::is_same<const U, E>::value && !std::is_const<U>::value>>
  __host__ __device__ smem(const smem<U>& o) : smem(o.get()) {}
  // cvta.to.shared: the 32-bit shared::cta window address PTX operands take.
  __device__ __forceinline__ uint32_t addr() const { return ptx::smem_addr(this->p_); }
};

// A variable of a CTA of the cluster (possibly this one), by its .shared::cluster address.
template <class E>
class dsmem {
 public:
  dsmem() = default;
  __host__ __device__ explicit dsmem(uint32_t cluster_addr) : addr_(cluster_addr) {}
  __host__ __device__ uint32_t addr() const { return addr_; }
  // ld.shared::cluster / st.shared::cluster of element i (4- or 8-byte elements: .u32, .u64).
  __device__ __forceinline__ std::remove_cv_t<E> load(size_t i) const {
    static_assert(sizeof(E) == 4 || sizeof(E) == 8, "a DSMEM view loads 4- or 8-byte elements");
    using V = std::remove_cv_t<E>;
    const uint32_t a = addr_ + uint32_t(i * sizeof(E));
    V v;
    if constexpr (sizeof(E) == 4) {
      const uint32_t r = ptx::ld_shared_cluster_u32(a);
      memcpy(&v, &r, 4);
    } else {
      const uint64_t r = ptx::ld_shared_cluster_u64(a);
      memcpy(&v, &r, 8);
    }
    return v;
  }
  __device__ __forceinline__ void store(size_t i, const std::remove_cv_t<E>& v) const {
    static_assert(sizeof(E) == 4 || sizeof(E) == 8, "a DSMEM view stores 4- or 8-byte elements");
    static_assert(!std::is_const<E>::value, "store through a view of const elements");
    const uint32_t a = addr_ + uint32_t(i * sizeof(E));
    if constexpr (sizeof(E) == 4) {
      uint32_t r;
      memcpy(&r, &v, 4);
      ptx::st_shared_cluster_u32(a, r);
    } else {
      uint64_t r;
      memcpy(&r, &v, 8);
      ptx::st_shared_cluster_u64(a, r);
    }
  }

 private:
  uint32_t addr_ = 0;
};

}  // namespace hopper
