// The PTX layer in one include: one function per instruction form the seed names, in namespace
// hopper::ptx. No state, no policy; the typed objects live one level up (hopper/async.cuh).
#pragma once
#include "ptx/atom.cuh"
#include "ptx/cluster.cuh"
#include "ptx/common.cuh"
#include "ptx/cp_async_bulk.cuh"
#include "ptx/cp_async_bulk_tensor.cuh"
#include "ptx/createpolicy.cuh"
#include "ptx/fence.cuh"
#include "ptx/griddepcontrol.cuh"
#include "ptx/ld_st.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/qualifiers.hpp"
#include "ptx/setmaxnreg.cuh"
#include "ptx/special_registers.cuh"
#include "ptx/wgmma.cuh"
