// `#define HOPPER_DEBUG_WAITS` with no value turns the debug checks on, as -DHOPPER_DEBUG_WAITS=1
// does (HOPPER_DEBUG_WAITS_ON in hopper/hd.hpp); every header that reads it compiles so.
#define HOPPER_DEBUG_WAITS
#include <gtest/gtest.h>

#include <stdexcept>

#include "hopper/objects/counts.hpp"
#include "hopper/pipeline/pipeline.hpp"

static_assert(HOPPER_DEBUG_WAITS_ON == 1, "an empty HOPPER_DEBUG_WAITS means on");

TEST(DebugWaitsMacro, EmptyDefinitionIsOn) {
  EXPECT_EQ(HOPPER_DEBUG_WAITS_ON, 1);
  const uint32_t zero = 0;  // a run-time value: the host check throws, naming it
  EXPECT_THROW(hopper::arrival_count{zero}, std::invalid_argument);
}
