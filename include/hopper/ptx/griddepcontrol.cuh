// griddepcontrol: programmatic dependent launch between grids of one stream (sm_90). A grid
// launched with cudaLaunchAttributeProgrammaticStreamSerialization may start before the grid
// ahead of it in the stream has finished, once every CTA of that grid has executed
// launch_dependents (or exited). So its prologue (barrier init, cluster sync, descriptor
// prefetch) overlaps the tail of the previous grid, and `wait` is the point from which it may
// touch memory the previous grid reads or writes.
#pragma once
#include "arch.cuh"

namespace hopper::ptx {

// griddepcontrol.wait; blocks until every prerequisite grid has completed and its memory
// operations are performed and visible to this grid. Returns at once when there is none.
// "memory" clobber: no global access may be hoisted above it.
__device__ __forceinline__ void griddepcontrol_wait() {
  HOPPER_PTX_NEEDS_SM90(griddepcontrol_wait);
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

// griddepcontrol.launch_dependents; lets the dependent grid be scheduled once every CTA of this
// grid has executed it or exited. It orders nothing: the dependent still waits (above) for this
// grid's completion before it reads what this grid wrote.
__device__ __forceinline__ void griddepcontrol_launch_dependents() {
  HOPPER_PTX_NEEDS_SM90(griddepcontrol_launch_dependents);
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

}  // namespace hopper::ptx
