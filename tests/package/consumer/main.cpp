// A separate project using hopper-async: the version header of the device library and the
// host model, which runs here without a GPU.
#include <hopper/model/model.hpp>
#include <hopper/version.hpp>

#include <cstdio>

int main() {
  // One barrier through one phase on the model: init(1), arrive, and the phase is complete.
  hopper::model::mbarrier_state bar;
  bar.init(1);
  bar.arrive();
  std::printf("hopper-async %d.%d.%d: model phases completed %llu\n", HOPPER_VERSION_MAJOR, HOPPER_VERSION_MINOR,
              HOPPER_VERSION_PATCH, (unsigned long long)bar.phase());
  return bar.phase() == 1 ? 0 : 1;
}
