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

// Whether Op<T> is well formed: T has the member Op calls, callable as written (a private one is
// not: access is checked here).
template <template <class> class Op, class T, class = void>
struct has : std::false_type {};
template <template <class> class Op, class T>
struct has<Op, T, std::void_t<Op<T>>> : std::true_type {};

template <class T>
using cta_shared_member = decltype(std::declval<T&>().template cta_shared<int>(std::string()));
template <class T>
using shared_buffer_member = decltype(std::declval<T&>().shared_buffer(std::string(), 1, 16));
template <class T>
using w_member = decltype(std::declval<T&>().w());
template <class T>
using wgmma_unit_member = decltype(std::declval<T&>().wgmma_unit());
// The pipeline's former second vocabulary: init, arrive, wait, sync_cta beside the PTX names.
template <class T>
using init_member = decltype(std::declval<T&>().init(std::declval<B&>(), 1u));
template <class T>
using arrive_member = decltype(std::declval<T&>().arrive(std::declval<B&>()));
template <class T>
using wait_member = decltype(std::declval<T&>().wait(std::declval<B&>(), 0u, true));
template <class T>
using sync_cta_member = decltype(std::declval<T&>().sync_cta());

// The detector finds a public member and not a private one.
struct with_members {
  int w();
  void sync_cta();
};
class with_private_members {
  int w();
  void sync_cta();
};
static_assert(has<w_member, with_members>::value, "detects a public member");
static_assert(has<sync_cta_member, with_members>::value, "detects a public member");
static_assert(!has<w_member, with_private_members>::value, "a private member is not callable");
static_assert(!has<sync_cta_member, with_private_members>::value, "a private member is not callable");

// What only the host sets up is not a member of the object a body receives (a body that used it
// would not compile for the GPU); the launch's lambda reaches it through free functions.
TEST(TargetContract, HostSetupIsNotAMember) {
  EXPECT_FALSE((has<cta_shared_member, target>::value));
  EXPECT_FALSE((has<shared_buffer_member, target>::value));
  EXPECT_FALSE((has<w_member, target>::value));
  EXPECT_FALSE((has<wgmma_unit_member, target>::value));
  // The free functions are there, with the types a launch's lambda needs.
  EXPECT_TRUE((std::is_same<decltype(hopper::model::cta_shared<B>(std::declval<target&>(), "b")), B&>::value));
  EXPECT_TRUE((std::is_same<decltype(hopper::model::shared_buffer(std::declval<target&>(), "s", 1, 16)),
                            hopper::model::smem<uint8_t>>::value));
  EXPECT_TRUE((std::is_same<decltype(hopper::model::world_of(std::declval<target&>())), hopper::model::world&>::value));
}

// One vocabulary: the pipeline calls the targets' PTX-named members, and the targets have no other
// names for the same instructions.
TEST(TargetContract, OneVocabulary) {
  EXPECT_FALSE((has<init_member, target>::value));
  EXPECT_FALSE((has<arrive_member, target>::value));
  EXPECT_FALSE((has<wait_member, target>::value));
  EXPECT_FALSE((has<sync_cta_member, target>::value));
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
