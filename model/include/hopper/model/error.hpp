// Every report the model makes is a model_error: one exception type carrying the kind of
// finding and a message that names the barrier, buffer, task and values involved.
#pragma once
#include <stdexcept>
#include <string>

namespace hopper::model {

enum class error_kind {
  undefined_behavior,  // an operation the PTX ISA leaves undefined
  deadlock,            // every live task blocked (a wait that never completes)
  raw_hazard,          // a read that may see stale data
  war_hazard,          // a write into data still being read
  waw_hazard,          // a write that may land before an earlier, unordered write of the same bytes
  step_limit,          // the program ran past the scheduler's step limit
  api_misuse,          // the model's own API used wrongly (unknown barrier, no current task ...)
  wrong_phase,         // an arrival counted on a phase that depends on the schedule (a phase race),
                       // or a wait that observes another phase than the one it waits for
};

inline const char* to_string(error_kind k) {
  switch (k) {
    case error_kind::undefined_behavior:
      return "undefined behaviour";
    case error_kind::deadlock:
      return "deadlock";
    case error_kind::raw_hazard:
      return "RAW hazard";
    case error_kind::war_hazard:
      return "WAR hazard";
    case error_kind::waw_hazard:
      return "WAW hazard";
    case error_kind::step_limit:
      return "step limit";
    case error_kind::api_misuse:
      return "API misuse";
    case error_kind::wrong_phase:
      return "wrong phase";
  }
  return "?";
}

class model_error : public std::runtime_error {
 public:
  model_error(error_kind kind, const std::string& message)
      : std::runtime_error(std::string(to_string(kind)) + ": " + message), kind_(kind) {}
  error_kind kind() const noexcept { return kind_; }

 private:
  error_kind kind_;
};

}  // namespace hopper::model
