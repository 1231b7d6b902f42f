// The target contract on the model's side: the probe body (tests/support/target_probe.hpp), which
// calls every member a kernel body may call, instantiated for hopper::model::target. Its device
// twin is tests/gpu/target_contract.cu; together they fail the build if the targets drift apart.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>

#include "hopper/model/target.hpp"
#include "hopper/source_location.hpp"
#include "target_probe.hpp"

template void hopper::probe::target_probe<hopper::model::target>(hopper::model::target&, hopper::model::mbarrier_slot&,
                                                                 hopper::model::smem<uint8_t>,
                                                                 hopper::model::gmem<uint8_t>,
                                                                 const hopper::model::tensor_view&);

namespace {

using hopper::model::target;
using B = target::barrier_type;

// Whether T has a member callable as written (a private one is not: access is checked here).
template <class T, class = void>
struct has_cta_shared : std::false_type {};
template <class T>
struct has_cta_shared<T, std::void_t<decltype(std::declval<T&>().template cta_shared<int>(std::string()))>>
    : std::true_type {};
template <class T, class = void>
struct has_shared_buffer : std::false_type {};
template <class T>
struct has_shared_buffer<T, std::void_t<decltype(std::declval<T&>().shared_buffer(std::string(), 1, 16))>>
    : std::true_type {};
template <class T, class = void>
struct has_w : std::false_type {};
template <class T>
struct has_w<T, std::void_t<decltype(std::declval<T&>().w())>> : std::true_type {};
template <class T, class = void>
struct has_wgmma_unit : std::false_type {};
template <class T>
struct has_wgmma_unit<T, std::void_t<decltype(std::declval<T&>().wgmma_unit())>> : std::true_type {};
// The pipeline's former second vocabulary: init, arrive, wait, sync_cta beside the PTX names.
template <class T, class = void>
struct has_backend_words : std::false_type {};
template <class T>
struct has_backend_words<T, std::void_t<decltype(std::declval<T&>().init(std::declval<B&>(), 1u))>> : std::true_type {};
template <class T, class = void>
struct has_backend_arrive : std::false_type {};
template <class T>
struct has_backend_arrive<T, std::void_t<decltype(std::declval<T&>().arrive(std::declval<B&>()))>> : std::true_type {};
template <class T, class = void>
struct has_backend_wait : std::false_type {};
template <class T>
struct has_backend_wait<T, std::void_t<decltype(std::declval<T&>().wait(std::declval<B&>(), 0u, true))>>
    : std::true_type {};
template <class T, class = void>
struct has_backend_sync : std::false_type {};
template <class T>
struct has_backend_sync<T, std::void_t<decltype(std::declval<T&>().sync_cta())>> : std::true_type {};

// What only the host sets up is not a member of the object a body receives (a body that used it
// would not compile for the GPU); the launch's lambda reaches it through free functions.
TEST(TargetContract, HostSetupIsNotAMember) {
  EXPECT_FALSE(has_cta_shared<target>::value);
  EXPECT_FALSE(has_shared_buffer<target>::value);
  EXPECT_FALSE(has_w<target>::value);
  EXPECT_FALSE(has_wgmma_unit<target>::value);
  // The free functions are there, with the types a launch's lambda needs.
  EXPECT_TRUE((std::is_same<decltype(hopper::model::cta_shared<B>(std::declval<target&>(), "b")), B&>::value));
  EXPECT_TRUE((std::is_same<decltype(hopper::model::shared_buffer(std::declval<target&>(), "s", 1, 16)),
                            hopper::model::smem<uint8_t>>::value));
  EXPECT_TRUE((std::is_same<decltype(hopper::model::world_of(std::declval<target&>())), hopper::model::world&>::value));
}

// One vocabulary: the pipeline calls the targets' PTX-named members, and the targets have no other
// names for the same instructions.
TEST(TargetContract, OneVocabulary) {
  EXPECT_FALSE(has_backend_words<target>::value);
  EXPECT_FALSE(has_backend_arrive<target>::value);
  EXPECT_FALSE(has_backend_wait<target>::value);
  EXPECT_FALSE(has_backend_sync<target>::value);
}

// The model's target takes call sites; its views are the model's; the pipeline sees both.
TEST(TargetContract, ModelTargetBuildsTheProbeAndTakesCallSites) {
  using T = hopper::model::target;
  EXPECT_TRUE(hopper::takes_source_location<T>);
  EXPECT_FALSE(T::on_device);
  EXPECT_TRUE((std::is_same<T::smem_t<uint8_t>, hopper::model::smem<uint8_t>>::value));
  EXPECT_TRUE((std::is_same<hopper::source_location_t<T>, hopper::model::src_loc>::value));
  EXPECT_FALSE(hopper::takes_source_location<int>);
}

}  // namespace
