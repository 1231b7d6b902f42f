// A separate project that found the installed hopper-async package.
#include <hopper/version.hpp>
#include <cstdio>
int main() {
  std::printf("hopper-async %d.%d.%d\n", HOPPER_VERSION_MAJOR, HOPPER_VERSION_MINOR,
              HOPPER_VERSION_PATCH);
  return HOPPER_VERSION_MAJOR == 0 ? 0 : 1;
}
