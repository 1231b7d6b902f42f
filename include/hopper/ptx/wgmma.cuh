// wgmma: the warpgroup-level asynchronous matrix multiply of sm_90a and its ordering
// instructions (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions"),
// plus the shared-memory matrix descriptor its operands are given by.
//
// wgmma is the "compute" half of a pipeline whose copies run in the background: one warpgroup
// (128 threads) issues it, the tensor cores read A and B straight from shared memory and the
// accumulators live in registers. It is tracked by its own scoreboard, not by an mbarrier:
// wgmma.commit_group closes a group, wgmma.wait_group N waits until at most N groups are pending,
// and only then may the shared memory it read be handed back to the producer (the release on an
// empty barrier that guards a stage against being overwritten while read) or its accumulator
// registers be read.
#pragma once
#include <cstdint>

#include "hopper/ptx/common.cuh"
#include "hopper/ptx/wgmma_desc.hpp"

namespace hopper::ptx {

// ---- shared-memory matrix descriptor -------------------------------------------------------
// wgmma_swizzle, make_wgmma_desc, make_wgmma_desc_kmajor_sw128, make_wgmma_desc_mnmajor_sw128:
// plain constexpr in hopper/ptx/wgmma_desc.hpp, so that host code (the executable model) builds and
// decodes the same descriptors.

// ---- ordering ------------------------------------------------------------------------------

// wgmma.fence.sync.aligned: orders this warpgroup's prior register and shared-memory
// accesses before the following wgmma.mma_async reads them; needed before the first wgmma of a
// tile and whenever the accumulators were touched by ordinary instructions.
__device__ __forceinline__ void wgmma_fence() {
  HOPPER_PTX_NEEDS_SM90A(wgmma_fence);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// wgmma.commit_group.sync.aligned: closes the group of all wgmma.mma_async issued since the last
// commit (the wgmma counterpart of cp.async.bulk.commit_group).
__device__ __forceinline__ void wgmma_commit_group() {
  HOPPER_PTX_NEEDS_SM90A(wgmma_commit_group);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// wgmma.wait_group.sync.aligned N: returns when at most N committed groups
// are still pending; then their shared-memory reads are done and their accumulators readable.
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
  HOPPER_PTX_NEEDS_SM90A(wgmma_wait_group);
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// An empty asm that claims to read and write one accumulator register: keeps the compiler from
// moving ordinary uses of it across wgmma.fence / wait_group while the tensor cores own it. It
// emits no instruction.
__device__ __forceinline__ void wgmma_fence_operand(float& r) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_fence_operand);
  asm volatile("" : "+f"(r)::"memory");
}

// The same for a register of an A fragment, which the tensor cores read until the wait_group that
// retires the wgmma-group of its mma_async.
__device__ __forceinline__ void wgmma_fence_operand(uint32_t& r) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_fence_operand);
  asm volatile("" : "+r"(r)::"memory");
}

template <class E, int R>
__device__ __forceinline__ void wgmma_fence_operand(E (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) wgmma_fence_operand(d[i]);
}

// ---- wgmma.mma_async, bf16 inputs, f32 accumulators -----------------------------------------
// Accumulator fragment of m64nNk16 (PTX ISA "Matrix Fragments for wgmma .m64nNk16", f32 D):
// thread t of the warpgroup, warp w = t / 32, lane l, holds d[i] at
//   row = 16*w + l/4 + 8*((i/2) % 2),  col = 8*(i/4) + 2*(l%4) + (i%2).

// wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 d, a-desc, b-desc, scale-d, imm-scale-a,
// imm-scale-b, imm-trans-a, imm-trans-b: D[64x64] (+)= A[64x16] * B[16x64], both from
// shared memory through descriptors. scale_d = false overwrites D (the first k-step of a tile).
template <int ScaleA = 1, int ScaleB = 1, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmma_m64n64k16_f32_bf16_bf16(float (&d)[32], uint64_t desc_a, uint64_t desc_b,
                                                              bool scale_d) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_m64n64k16_f32_bf16_bf16);
  static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
  static_assert(TransA == 0 || TransA == 1, "imm-trans-a is 0 or 1");
  static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
  // "memory": the instruction reads shared memory written by TMA; it must not move across the
  // waits that made that data visible.
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16\n"
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "},\n"
      "%32, %33, p, %35, %36, %37, %38;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(int(scale_d)), "n"(ScaleA), "n"(ScaleB), "n"(TransA), "n"(TransB)
      : "memory");
}

// wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16 d, a-desc, b-desc, scale-d, imm-scale-a,
// imm-scale-b, imm-trans-a, imm-trans-b: D[64x80] (+)= A[64x16] * B[16x80], both from
// shared memory through descriptors. scale_d = false overwrites D (the first k-step of a tile).
template <int ScaleA = 1, int ScaleB = 1, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmma_m64n80k16_f32_bf16_bf16(float (&d)[40], uint64_t desc_a, uint64_t desc_b,
                                                              bool scale_d) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_m64n80k16_f32_bf16_bf16);
  static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
  static_assert(TransA == 0 || TransA == 1, "imm-trans-a is 0 or 1");
  static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
  // "memory": the instruction reads shared memory written by TMA; it must not move across the
  // waits that made that data visible.
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %42, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16\n"
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39"
      "},\n"
      "%40, %41, p, %43, %44, %45, %46;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
      : "l"(desc_a), "l"(desc_b), "r"(int(scale_d)), "n"(ScaleA), "n"(ScaleB), "n"(TransA), "n"(TransB)
      : "memory");
}

// wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 d, a-desc, b-desc, scale-d, imm-scale-a,
// imm-scale-b, imm-trans-a, imm-trans-b: D[64x128] (+)= A[64x16] * B[16x128], both from
// shared memory through descriptors. scale_d = false overwrites D (the first k-step of a tile).
template <int ScaleA = 1, int ScaleB = 1, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmma_m64n128k16_f32_bf16_bf16(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                               bool scale_d) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_m64n128k16_f32_bf16_bf16);
  static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
  static_assert(TransA == 0 || TransA == 1, "imm-trans-a is 0 or 1");
  static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
  // "memory": the instruction reads shared memory written by TMA; it must not move across the
  // waits that made that data visible.
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16\n"
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "},\n"
      "%64, %65, p, %67, %68, %69, %70;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(int(scale_d)), "n"(ScaleA), "n"(ScaleB), "n"(TransA), "n"(TransB)
      : "memory");
}

// wgmma.mma_async.sync.aligned.m64n160k16.f32.bf16.bf16 d, a-desc, b-desc, scale-d, imm-scale-a,
// imm-scale-b, imm-trans-a, imm-trans-b: D[64x160] (+)= A[64x16] * B[16x160], both from
// shared memory through descriptors. scale_d = false overwrites D (the first k-step of a tile).
template <int ScaleA = 1, int ScaleB = 1, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmma_m64n160k16_f32_bf16_bf16(float (&d)[80], uint64_t desc_a, uint64_t desc_b,
                                                               bool scale_d) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_m64n160k16_f32_bf16_bf16);
  static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
  static_assert(TransA == 0 || TransA == 1, "imm-trans-a is 0 or 1");
  static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
  // "memory": the instruction reads shared memory written by TMA; it must not move across the
  // waits that made that data visible.
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %82, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n160k16.f32.bf16.bf16\n"
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79"
      "},\n"
      "%80, %81, p, %83, %84, %85, %86;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
      : "l"(desc_a), "l"(desc_b), "r"(int(scale_d)), "n"(ScaleA), "n"(ScaleB), "n"(TransA), "n"(TransB)
      : "memory");
}

// wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 d, a-desc, b-desc, scale-d, imm-scale-a,
// imm-scale-b, imm-trans-a, imm-trans-b: D[64x192] (+)= A[64x16] * B[16x192], both from
// shared memory through descriptors. scale_d = false overwrites D (the first k-step of a tile).
template <int ScaleA = 1, int ScaleB = 1, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmma_m64n192k16_f32_bf16_bf16(float (&d)[96], uint64_t desc_a, uint64_t desc_b,
                                                               bool scale_d) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_m64n192k16_f32_bf16_bf16);
  static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
  static_assert(TransA == 0 || TransA == 1, "imm-trans-a is 0 or 1");
  static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
  // "memory": the instruction reads shared memory written by TMA; it must not move across the
  // waits that made that data visible.
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %98, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16\n"
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
      "},\n"
      "%96, %97, p, %99, %100, %101, %102;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),
        "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),
        "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
      : "l"(desc_a), "l"(desc_b), "r"(int(scale_d)), "n"(ScaleA), "n"(ScaleB), "n"(TransA), "n"(TransB)
      : "memory");
}

// wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 d, a-desc, b-desc, scale-d, imm-scale-a,
// imm-scale-b, imm-trans-a, imm-trans-b: D[64x256] (+)= A[64x16] * B[16x256], both from
// shared memory through descriptors. scale_d = false overwrites D (the first k-step of a tile).
template <int ScaleA = 1, int ScaleB = 1, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmma_m64n256k16_f32_bf16_bf16(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                               bool scale_d) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_m64n256k16_f32_bf16_bf16);
  static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
  static_assert(TransA == 0 || TransA == 1, "imm-trans-a is 0 or 1");
  static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
  // "memory": the instruction reads shared memory written by TMA; it must not move across the
  // waits that made that data visible.
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16\n"
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "},\n"
      "%128, %129, p, %131, %132, %133, %134;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),
        "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),
        "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
        "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),
        "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]),
        "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
        "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(int(scale_d)), "n"(ScaleA), "n"(ScaleB), "n"(TransA), "n"(TransB)
      : "memory");
}

// The m64nNk16 form for N in {64, 80, 128, 160, 192, 256}, chosen at compile time.
template <int N, int ScaleA = 1, int ScaleB = 1, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmma_m64nNk16_f32_bf16_bf16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,
                                                             bool scale_d) {
  static_assert(wgmma_n_instantiated(N), "instantiated for N = 64, 80, 128, 160, 192, 256");
  if constexpr (N == 64) {
    wgmma_m64n64k16_f32_bf16_bf16<ScaleA, ScaleB, TransA, TransB>(d, desc_a, desc_b, scale_d);
  } else if constexpr (N == 80) {
    wgmma_m64n80k16_f32_bf16_bf16<ScaleA, ScaleB, TransA, TransB>(d, desc_a, desc_b, scale_d);
  } else if constexpr (N == 128) {
    wgmma_m64n128k16_f32_bf16_bf16<ScaleA, ScaleB, TransA, TransB>(d, desc_a, desc_b, scale_d);
  } else if constexpr (N == 160) {
    wgmma_m64n160k16_f32_bf16_bf16<ScaleA, ScaleB, TransA, TransB>(d, desc_a, desc_b, scale_d);
  } else if constexpr (N == 192) {
    wgmma_m64n192k16_f32_bf16_bf16<ScaleA, ScaleB, TransA, TransB>(d, desc_a, desc_b, scale_d);
  } else {
    wgmma_m64n256k16_f32_bf16_bf16<ScaleA, ScaleB, TransA, TransB>(d, desc_a, desc_b, scale_d);
  }
}

// ---- wgmma.mma_async, A in registers, bf16 inputs, f32 accumulators -------------------------
// A fragment of m64nNk16 (PTX ISA "Matrix Fragments for wgmma .m64nNk16", A in registers): the
// eight bf16 of thread t (warp w = t / 32, lane l), two to a register, low half first, are
//   a[e / 2] >> 16 * (e % 2):  row = 16*w + l/4 + 8*((e/2) % 2),  k = 8*(e/4) + 2*(l%4) + (e%2),
// the places of d[0..7] in the accumulator fragment: an f32 accumulator of 16 columns, rounded to
// bf16 in pairs, is the A operand of the next wgmma over those 16 values of K.

// wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 d, a, b-desc, scale-d, imm-scale-a, imm-scale-b,
// imm-trans-b: D[64x64] (+)= A[64x16] * B[16x64], A from four registers of each thread (two bf16
// each, in the A fragment of m64nNk16), B from shared memory through its descriptor.
template <int ScaleA = 1, int ScaleB = 1, int TransB = 0>
__device__ __forceinline__ void wgmma_m64n64k16_f32_bf16_bf16(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b,
                                                              bool scale_d) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_m64n64k16_f32_bf16_bf16);
  static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
  static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
  // "memory": B is read from shared memory written by TMA or by this CTA's threads; the
  // instruction must not move across the waits and fences that made it visible.
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16\n"
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "},\n"
      "{%32, %33, %34, %35}, %36, p, %38, %39, %40;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(int(scale_d)), "n"(ScaleA), "n"(ScaleB),
        "n"(TransB)
      : "memory");
}

// wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 d, a, b-desc, scale-d, imm-scale-a, imm-scale-b,
// imm-trans-b: D[64x128] (+)= A[64x16] * B[16x128], A from four registers of each thread (two bf16
// each, in the A fragment of m64nNk16), B from shared memory through its descriptor.
template <int ScaleA = 1, int ScaleB = 1, int TransB = 0>
__device__ __forceinline__ void wgmma_m64n128k16_f32_bf16_bf16(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b,
                                                               bool scale_d) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_m64n128k16_f32_bf16_bf16);
  static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
  static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
  // "memory": B is read from shared memory written by TMA or by this CTA's threads; the
  // instruction must not move across the waits and fences that made it visible.
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16\n"
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "},\n"
      "{%64, %65, %66, %67}, %68, p, %70, %71, %72;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(int(scale_d)), "n"(ScaleA), "n"(ScaleB),
        "n"(TransB)
      : "memory");
}

// wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 d, a, b-desc, scale-d, imm-scale-a, imm-scale-b,
// imm-trans-b: D[64x192] (+)= A[64x16] * B[16x192], A from four registers of each thread (two bf16
// each, in the A fragment of m64nNk16), B from shared memory through its descriptor.
template <int ScaleA = 1, int ScaleB = 1, int TransB = 0>
__device__ __forceinline__ void wgmma_m64n192k16_f32_bf16_bf16(float (&d)[96], const uint32_t (&a)[4], uint64_t desc_b,
                                                               bool scale_d) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_m64n192k16_f32_bf16_bf16);
  static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
  static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
  // "memory": B is read from shared memory written by TMA or by this CTA's threads; the
  // instruction must not move across the waits and fences that made it visible.
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %101, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16\n"
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
      "},\n"
      "{%96, %97, %98, %99}, %100, p, %102, %103, %104;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),
        "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),
        "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(int(scale_d)), "n"(ScaleA), "n"(ScaleB),
        "n"(TransB)
      : "memory");
}

// wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 d, a, b-desc, scale-d, imm-scale-a, imm-scale-b,
// imm-trans-b: D[64x256] (+)= A[64x16] * B[16x256], A from four registers of each thread (two bf16
// each, in the A fragment of m64nNk16), B from shared memory through its descriptor.
template <int ScaleA = 1, int ScaleB = 1, int TransB = 0>
__device__ __forceinline__ void wgmma_m64n256k16_f32_bf16_bf16(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b,
                                                               bool scale_d) {
  HOPPER_PTX_NEEDS_SM90A(wgmma_m64n256k16_f32_bf16_bf16);
  static_assert(ScaleA == 1 || ScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(ScaleB == 1 || ScaleB == -1, "imm-scale-b is 1 or -1");
  static_assert(TransB == 0 || TransB == 1, "imm-trans-b is 0 or 1");
  // "memory": B is read from shared memory written by TMA or by this CTA's threads; the
  // instruction must not move across the waits and fences that made it visible.
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16\n"
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "},\n"
      "{%128, %129, %130, %131}, %132, p, %134, %135, %136;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),
        "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),
        "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
        "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),
        "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]),
        "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
        "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(int(scale_d)), "n"(ScaleA), "n"(ScaleB),
        "n"(TransB)
      : "memory");
}

// The m64nNk16 form with A in registers, for N in {64, 128, 192, 256}, chosen at compile time.
template <int N, int ScaleA = 1, int ScaleB = 1, int TransB = 0>
__device__ __forceinline__ void wgmma_m64nNk16_f32_bf16_bf16(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                                                             bool scale_d) {
  static_assert(wgmma_rs_n_instantiated(N), "instantiated for N = 64, 128, 192, 256");
  if constexpr (N == 64) {
    wgmma_m64n64k16_f32_bf16_bf16<ScaleA, ScaleB, TransB>(d, a, desc_b, scale_d);
  } else if constexpr (N == 128) {
    wgmma_m64n128k16_f32_bf16_bf16<ScaleA, ScaleB, TransB>(d, a, desc_b, scale_d);
  } else if constexpr (N == 192) {
    wgmma_m64n192k16_f32_bf16_bf16<ScaleA, ScaleB, TransB>(d, a, desc_b, scale_d);
  } else {
    wgmma_m64n256k16_f32_bf16_bf16<ScaleA, ScaleB, TransB>(d, a, desc_b, scale_d);
  }
}

}  // namespace hopper::ptx
