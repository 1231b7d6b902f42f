// hopper-async, the device library in one include: the PTX layer (hopper::ptx) and the typed
// objects over it (hopper::mbarrier, phase/stage_state, bulk_group, named_barrier, cluster).
#pragma once
#include "limits.hpp"
#include "ptx.cuh"
#include "counts.cuh"
#include "phase.cuh"
#include "wait_debug.cuh"
#include "mbarrier.cuh"
#include "bulk_group.cuh"
#include "named_barrier.cuh"
#include "cluster.cuh"
