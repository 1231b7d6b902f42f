// The .sem and .scope qualifiers of the PTX ISA as compile-time values. Plain C++, so that the
// device's PTX layer and the host model share one memory-order vocabulary: a kernel written over
// a target names `ptx::sem::release` once and both machines read the same word.
#pragma once

namespace hopper::ptx {

// The memory-ordering qualifier (.sem) of an instruction; which ones an instruction accepts is
// checked by a static_assert in that instruction's function.
enum class sem { release, relaxed, acquire, acq_rel, sc };

// The scope qualifier (.scope): the set of threads that observe the ordering directly.
enum class scope { cta, cluster, gpu, sys };

}  // namespace hopper::ptx
