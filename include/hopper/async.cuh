// hopper-async, the device library in one include: the PTX layer (hopper::ptx) and the typed
// objects over it (hopper::mbarrier, phase/stage_state, bulk_group, named_barrier, cluster).
#pragma once
#include "bulk_group.cuh"
#include "cluster.cuh"
#include "counts.hpp"
#include "limits.hpp"
#include "mbarrier.cuh"
#include "named_barrier.cuh"
#include "phase.hpp"
#include "ptx.cuh"
#include "wait_debug.cuh"
