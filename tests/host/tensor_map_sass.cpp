// Zero overhead of the tensor copies: each cp_async_bulk_tensor_* function compiles to exactly
// its one TMA instruction of the right rank (UTMALDG / UTMASTG / UTMAPF .1D-.5D, .MULTICAST, the
// cache-hint form with its descriptor), and the streaming copy kernels' loops are bulk copies
// with no local-memory spills. Compiles a generated translation unit with nvcc and reads its SASS
// with cuobjdump; skips, saying why, when either tool is missing.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "sass_tools.hpp"

namespace {

using hopper_test::count_of;

// One kernel per instruction form, so each function's SASS can be read alone.
const char* kSource = R"(
#include "hopper/ptx/cp_async_bulk_tensor.cuh"
#include "kernels/copy/stream_copy.cuh"
using namespace hopper::ptx;
#define SMEM __shared__ alignas(1024) char buf[2048]; __shared__ uint64_t bar;
#define SMEM_NOBAR __shared__ alignas(1024) char buf[2048];
extern "C" __global__ void ld1(const __grid_constant__ hopper::tensor_map m, int x) { SMEM cp_async_bulk_tensor_shared_cluster_global(buf, m, &bar, x); }
extern "C" __global__ void ld2(const __grid_constant__ hopper::tensor_map m, int x) { SMEM cp_async_bulk_tensor_shared_cluster_global(buf, m, &bar, x, 1); }
extern "C" __global__ void ld3(const __grid_constant__ hopper::tensor_map m, int x) { SMEM cp_async_bulk_tensor_shared_cluster_global(buf, m, &bar, x, 1, 2); }
extern "C" __global__ void ld4(const __grid_constant__ hopper::tensor_map m, int x) { SMEM cp_async_bulk_tensor_shared_cluster_global(buf, m, &bar, x, 1, 2, 3); }
extern "C" __global__ void ld5(const __grid_constant__ hopper::tensor_map m, int x) { SMEM cp_async_bulk_tensor_shared_cluster_global(buf, m, &bar, x, 1, 2, 3, 4); }
extern "C" __global__ void ldh(const __grid_constant__ hopper::tensor_map m, int x, uint64_t p) { SMEM cp_async_bulk_tensor_shared_cluster_global_hint(buf, m, &bar, p, x, 1); }
extern "C" __global__ void mc2(const __grid_constant__ hopper::tensor_map m, int x) { SMEM cp_async_bulk_tensor_shared_cluster_global_multicast(buf, m, &bar, 3, x, 1); }
extern "C" __global__ void st3(const __grid_constant__ hopper::tensor_map m, int x) { SMEM_NOBAR cp_async_bulk_tensor_global_shared_cta(m, buf, x, 1, 2); }
extern "C" __global__ void sth(const __grid_constant__ hopper::tensor_map m, int x, uint64_t p) { SMEM_NOBAR cp_async_bulk_tensor_global_shared_cta_hint(m, buf, p, x); }
extern "C" __global__ void pf4(const __grid_constant__ hopper::tensor_map m, int x) { cp_async_bulk_prefetch_tensor_L2_global(m, x, 1, 2, 3); }
extern "C" __global__ void pfm(const __grid_constant__ hopper::tensor_map m) { prefetch_tensormap(m); }
void* instances[] = {(void*)&hopper::kernels::stream_copy_1d_kernel<8, 1>,
                     (void*)&hopper::kernels::stream_copy_2d_kernel<8, 1>,
                     (void*)&hopper::kernels::stream_axpb_bf16_kernel<8, 1>,
                     (void*)&hopper::kernels::stream_ldst_kernel<8, false, hopper::kernels::detail::st_kind::wb>,
                     (void*)&hopper::kernels::stream_ldst_kernel<8, true, hopper::kernels::detail::st_kind::wb>};
)";

struct sass {
  std::string text, why_not, ptxas;
};

const sass& compiled() {
  static const sass s = [] {
    sass r;
    const std::string nvcc = hopper_test::find_nvcc();
    if (nvcc.empty()) return r.why_not = "nvcc not found (set NVCC or PATH)", r;
    const std::string cuobjdump = hopper_test::find_cuobjdump(nvcc);
    if (cuobjdump.empty()) return r.why_not = "cuobjdump not found (set CUOBJDUMP or PATH)", r;
    const std::string out = std::string(HOPPER_BINARY_DIR) + "/tensor_map_sass";
    std::ofstream(out + ".cu") << kSource;
    const auto log = hopper_test::compile_cubin(nvcc, HOPPER_SOURCE_DIR, out + ".cu", out + ".cubin",
                                                "--expt-relaxed-constexpr -Xptxas -v");
    r.ptxas = log.output;
    if (log.status != 0) {
      ADD_FAILURE() << "nvcc failed:\n" << r.ptxas;
      return r;
    }
    const auto dump = hopper_test::dump_sass(cuobjdump, out + ".cubin");
    if (dump.status != 0)
      ADD_FAILURE() << "cuobjdump failed:\n" << dump.output;
    else
      r.text = dump.output;
    return r;
  }();
  return s;
}

// The SASS of one function (from its "Function : name" header to the next).
std::string function_sass(const std::string& all, const std::string& name) {
  const size_t at = all.find("Function : " + name + "\n");
  if (at == std::string::npos) return "";
  const size_t end = all.find("Function : ", at + 1);
  return all.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

#define REQUIRE_SASS()                               \
  const sass& s = compiled();                        \
  if (!s.why_not.empty()) GTEST_SKIP() << s.why_not; \
  ASSERT_FALSE(s.text.empty())

TEST(TensorMapSass, EachLoadIsOneUtmaldgOfItsRank) {
  REQUIRE_SASS();
  const char* names[] = {"ld1", "ld2", "ld3", "ld4", "ld5"};
  for (int r = 1; r <= 5; ++r) {
    const std::string f = function_sass(s.text, names[r - 1]);
    ASSERT_FALSE(f.empty()) << names[r - 1];
    EXPECT_EQ(count_of(f, "UTMALDG"), 1u) << f;
    EXPECT_EQ(count_of(f, "UTMALDG." + std::to_string(r) + "D "), 1u) << f;
  }
  const std::string h = function_sass(s.text, "ldh");
  EXPECT_EQ(count_of(h, "UTMALDG.2D"), 1u) << h;
  EXPECT_EQ(count_of(h, "desc["), 1u) << "the cache-hint form carries the policy descriptor:\n" << h;
  const std::string m = function_sass(s.text, "mc2");
  EXPECT_EQ(count_of(m, "UTMALDG.2D.MULTICAST"), 1u) << m;
}

TEST(TensorMapSass, StoresAndPrefetchesAreOneInstructionEach) {
  REQUIRE_SASS();
  EXPECT_EQ(count_of(function_sass(s.text, "st3"), "UTMASTG.3D "), 1u);
  EXPECT_EQ(count_of(function_sass(s.text, "sth"), "UTMASTG.1D"), 1u);
  EXPECT_EQ(count_of(function_sass(s.text, "sth"), "desc["), 1u);
  EXPECT_EQ(count_of(function_sass(s.text, "pf4"), "UTMAPF.L2.4D"), 1u);
  EXPECT_EQ(count_of(function_sass(s.text, "pfm"), "UTMACCTL.PF"), 1u);
}

TEST(TensorMapSass, StreamCopyKernelsAreBulkCopiesWithoutSpills) {
  REQUIRE_SASS();
  EXPECT_NE(s.ptxas.find("stream_copy_1d_kernel"), std::string::npos) << s.ptxas;
  EXPECT_EQ(count_of(s.ptxas, "bytes spill stores"), count_of(s.ptxas, "0 bytes spill stores")) << s.ptxas;
  const std::string k1 =
      function_sass(s.text, "_ZN6hopper7kernels21stream_copy_1d_kernelILi8ELi1EEEvPhPKhmjNS0_12stream_knobsE");
  ASSERT_FALSE(k1.empty());
  EXPECT_EQ(count_of(k1, "UBLKCP.S.G"), 2u) << "one bulk load in the producer loop, plain and .L2::cache_hint";
  EXPECT_EQ(count_of(k1, "UBLKCP.G.S"), 2u) << "one bulk store in the storer loop, plain and .L2::cache_hint";
  EXPECT_EQ(count_of(k1, "MEMBAR"), 0u) << "no memory barrier: ordering is the mbarriers' and the bulk groups'";
  EXPECT_EQ(count_of(k1, "LDL") + count_of(k1, "STL"), 0u);
  // The st_global path: bulk loads, no bulk store, 16-byte ld.shared / st.global pairs.
  for (const char* name :
       {"_ZN6hopper7kernels18stream_ldst_kernelILi8ELb0ELNS0_6detail7st_kindE0EEEvPhPKhmjNS0_12stream_knobsEff",
        "_ZN6hopper7kernels18stream_ldst_kernelILi8ELb1ELNS0_6detail7st_kindE0EEEvPhPKhmjNS0_12stream_knobsEff"}) {
    const std::string k = function_sass(s.text, name);
    ASSERT_FALSE(k.empty()) << name;
    EXPECT_EQ(count_of(k, "UBLKCP.S.G"), 2u) << name;
    EXPECT_EQ(count_of(k, "UBLKCP.G.S"), 0u) << name;
    EXPECT_GE(count_of(k, "LDS.128"), 5u) << "a batch of four and the remainder:\n" << k;
    EXPECT_EQ(count_of(k, "STG.E.128"), count_of(k, "LDS.128")) << k;
    EXPECT_EQ(count_of(k, "MEMBAR"), 0u) << name;
    EXPECT_EQ(count_of(k, "LDL") + count_of(k, "STL"), 0u) << name;
  }
  EXPECT_GE(count_of(s.text, "UTMALDG.2D"), 1u);
  EXPECT_GE(count_of(s.text, "UTMASTG.2D"), 1u);
}

}  // namespace
