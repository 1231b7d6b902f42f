// Misuse the objects layer must reject at compile time. tests/host/zero_overhead_sass.cpp
// compiles this file once per case with -DBAD=<n> and expects nvcc to fail; BAD=0 must compile.
#include <hopper/async.cuh>
__global__ void misuse() {
  __shared__ uint64_t b;
  hopper::mbarrier bar(b);
#if BAD == 1
  bar.wait(0);  // a raw int is not a parity
#elif BAD == 2
  constexpr hopper::arrival_count c(0);  // 0 arrivals
#elif BAD == 3
  hopper::named_barrier<16, 64>::sync();  // id past 15
#elif BAD == 4
  hopper::named_barrier<1, 48>::sync();  // not a multiple of 32
#elif BAD == 5
  hopper::ptx::setmaxnreg_inc<100>();  // not a multiple of 8
#elif BAD == 6
  bar.arrive().pending_count();  // PTX defines it only for .noComplete
#elif BAD == 7
  bar.init(5);  // a raw int is not an arrival_count
#else
  bar.init(hopper::arrival_count(1));
  bar.wait(hopper::parity(0));
#endif
}
