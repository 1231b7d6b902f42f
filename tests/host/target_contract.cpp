// The target contract on the model's side: the probe body (tests/support/target_probe.hpp), which
// calls every member a kernel body may call, instantiated for hopper::model::target. Its device
// twin is tests/gpu/target_contract.cu; together they fail the build if the targets drift apart.
#include <gtest/gtest.h>

#include <type_traits>

#include "hopper/model/target.hpp"
#include "hopper/source_location.hpp"
#include "target_probe.hpp"

template void hopper::probe::target_probe<hopper::model::target>(hopper::model::target&, hopper::model::mbarrier_slot&,
                                                                 hopper::model::smem<uint8_t>,
                                                                 hopper::model::gmem<uint8_t>,
                                                                 const hopper::model::tensor_view&);

namespace {

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
