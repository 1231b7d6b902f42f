// Where a call was written, for the executable model's reports. A kernel written over a target
// passes its call sites down through the pipeline: a target that reports (the model's) names a
// type with `current()` taking the caller's __builtin_FILE/LINE/FUNCTION as default arguments;
// any other (the device's) gets `no_source_location`, an empty value that costs nothing.
#pragma once
#include <type_traits>

#include "hopper/hd.hpp"

namespace hopper {

struct no_source_location {
  HOPPER_HD static constexpr no_source_location current() { return {}; }
};

// Target::source_location_type if it names one, else no_source_location.
template <class Target, class = void>
struct source_location_of {
  using type = no_source_location;
};
template <class Target>
struct source_location_of<Target, std::void_t<typename Target::source_location_type>> {
  using type = typename Target::source_location_type;
};
template <class Target>
using source_location_t = typename source_location_of<Target>::type;

// Whether Target takes call sites (then it has pin_source(loc) / unpin_source()).
template <class Target>
inline constexpr bool takes_source_location = !std::is_same<source_location_t<Target>, no_source_location>::value;

}  // namespace hopper
