# pip install --no-build-isolation ./python   (needs PyTorch with CUDA, and nvcc 12.8 or later)
# Builds hopper._C with PyTorch's extension tools: csrc/kernels.cu (the library's kernels, nvcc,
# sm_90a) and csrc/ops.cpp (the torch operators). The library's headers come from this source tree.
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
if not os.path.isfile(os.path.join(root, "include", "hopper", "ptx.cuh")):
    raise RuntimeError(f"hopper-async: the library's headers are not at {root}/include; build from the source tree")

setup(
    ext_modules=[
        CUDAExtension(
            name="hopper._C",
            sources=["csrc/ops.cpp", "csrc/kernels.cu"],
            include_dirs=[os.path.join(root, "include"), root, os.path.join(here, "csrc")],
            # No -std: PyTorch's extension tools pass the standard its own headers need (C++17 up
            # to 2.x's early releases, C++20 since), and the library compiles under either.
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "--expt-relaxed-constexpr", "-gencode=arch=compute_90a,code=sm_90a"],
            },
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
