// The executable model of hopper-async: everything a host program needs.
#pragma once
#include "hopper/model/barrier.hpp"
#include "hopper/model/clock.hpp"
#include "hopper/model/error.hpp"
#include "hopper/model/explore.hpp"
#include "hopper/model/mbarrier.hpp"
#include "hopper/model/memory.hpp"
#include "hopper/model/named_barrier.hpp"
#include "hopper/model/scheduler.hpp"
#include "hopper/model/world.hpp"
