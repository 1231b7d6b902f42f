// The PTX layer in one include: every file of include/hopper/ptx/, one function per instruction
// form, in namespace hopper::ptx. No state, no policy; the typed objects live one level up
// (hopper/async.cuh). The layer includes nothing of the library above it: only the standard
// library, CUDA's headers, its own files and hopper/hd.hpp (the host/device qualifier macros
// beneath every layer); tests/host/layers.cpp checks both.
#pragma once
#include "ptx/arch.cuh"
#include "ptx/atom.cuh"
#include "ptx/cluster.cuh"
#include "ptx/common.cuh"
#include "ptx/cp_async_bulk.cuh"
#include "ptx/cp_async_bulk_tensor.cuh"
#include "ptx/createpolicy.cuh"
#include "ptx/fence.cuh"
#include "ptx/griddepcontrol.cuh"
#include "ptx/ld_st.cuh"
#include "ptx/math.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/named_barrier.cuh"
#include "ptx/qualifiers.hpp"
#include "ptx/setmaxnreg.cuh"
#include "ptx/special_registers.cuh"
#include "ptx/wgmma.cuh"
#include "ptx/wgmma_desc.hpp"
