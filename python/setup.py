# pip install --no-build-isolation ./python   (needs PyTorch with CUDA, and nvcc 12.8 or later)
# Builds hopper._C with PyTorch's extension tools: csrc/kernels.cu (the library's kernels, nvcc,
# sm_90a) and csrc/ops.cpp (the torch operators). The library's headers come from this source tree.
import os
import subprocess
import sys
import tempfile

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# A C++ compiler whose libstdc++ is linked statically into a shared object (a toolchain built
# without a shared libstdc++, or one whose libstdc++.so is a linker script adding a static part)
# gives the extension its own copy of the stream and locale code. Inside a process that has
# loaded PyTorch that copy meets the process's locale, and the first number formatted into a
# stream (every TORCH_CHECK message with a number in it) ends in SIGSEGV. So before building,
# the compiler PyTorch's tools will use ($CXX, else c++) builds a probe that formats a number,
# and the probe is run in a process that has imported torch.
PROBE = '#include <sstream>\n#include <string>\nextern "C" int probe(long v) ' \
        '{ std::ostringstream s; s << v; return int(s.str().size()); }\n'


def check_cxx():
    cxx = os.environ.get("CXX", "c++")
    with tempfile.TemporaryDirectory() as tmp:
        src, lib = os.path.join(tmp, "probe.cpp"), os.path.join(tmp, "probe.so")
        with open(src, "w") as f:
            f.write(PROBE)
        built = subprocess.run([cxx, "-shared", "-fPIC", "-O2", src, "-o", lib], capture_output=True, text=True)
        if built.returncode != 0:
            return  # the build itself will report what the compiler says
        code = f"import torch, ctypes; print(ctypes.CDLL({lib!r}).probe(123456789))"
        ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if ran.returncode != 0 or ran.stdout.strip() != "9":
            raise RuntimeError(
                f"hopper-async: the C++ compiler {cxx!r} ($CXX, else c++) links its libstdc++ into shared "
                f"objects statically: a probe built by it that formats a number crashed (exit status "
                f"{ran.returncode}) in a process that imported torch, as the extension's error messages "
                "would. Build with a compiler that links libstdc++ as a shared library, for example "
                "CXX=/usr/bin/g++ pip install --no-build-isolation ./python")


check_cxx()

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
