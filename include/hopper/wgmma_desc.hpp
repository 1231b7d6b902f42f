// The wgmma matrix descriptor moved into the PTX layer: hopper/ptx/wgmma_desc.hpp. This path
// stays for includers not yet updated (the GEMM's); include the new one.
#pragma once
#include "hopper/ptx/wgmma_desc.hpp"
