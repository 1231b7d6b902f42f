// hopper-async, the device library in one include: the PTX layer (hopper::ptx) and the typed
// objects over it (hopper::mbarrier, phase/stage_state, bulk_group, named_barrier, cluster).
#pragma once
#include "hopper/objects/bulk_group.cuh"
#include "hopper/objects/cluster.cuh"
#include "hopper/objects/counts.hpp"
#include "hopper/objects/limits.hpp"
#include "hopper/objects/mbarrier.cuh"
#include "hopper/objects/named_barrier.cuh"
#include "hopper/objects/phase.hpp"
#include "hopper/objects/wait_debug.cuh"
#include "hopper/ptx.cuh"
