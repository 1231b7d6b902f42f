// The torch operators hopper::gemm, hopper::copy_ and hopper::axpb (TORCH_LIBRARY), on the current
// CUDA stream, with the GEMM's split-K / stream-K workspace from PyTorch's caching allocator. Each
// argument is checked here first, and a bad one raises a Python error that names it (ValueError,
// or TypeError for a dtype); the library's own checks (alignment, overlap) come back the same way.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "launch.hpp"

namespace {

std::string list_str(at::IntArrayRef v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string shape_str(const at::Tensor& t) { return list_str(t.sizes()) + " with strides " + list_str(t.strides()); }

void check_cuda_sm90(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK_VALUE(t.is_cuda(), op, ": ", name, " must be a CUDA tensor, got one on ", t.device());
  const cudaDeviceProp* prop = at::cuda::getDeviceProperties(t.get_device());
  TORCH_CHECK(prop->major == 9 && prop->minor == 0, op, ": ", name, " is on ", t.device(), " (", prop->name, ", sm_",
              prop->major, prop->minor, "); hopper-async runs on sm_90 (H100, H200)");
}

// Calls into the library, turning its exceptions into the Python errors PyTorch raises.
template <class F>
void library_call(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  } catch (const std::runtime_error& e) {
    TORCH_CHECK(false, e.what());
  }
}

// A tensor the operator allocates (an output, the workspace), from the caching allocator; where
// the device cannot hold it, the out-of-memory error says which operator and what it needed.
at::Tensor allocate(const char* op, const char* what, at::IntArrayRef sizes, const at::TensorOptions& options) {
  try {
    return at::empty(sizes, options);
  } catch (const c10::OutOfMemoryError& e) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, op, ": ", what, " of shape ", list_str(sizes), " (",
                     c10::elementSize(c10::typeMetaToScalarType(options.dtype())),
                     "-byte elements) does not fit: ", e.what_without_backtrace());
  }
}

// One operand's layout: K-major when its K dimension has unit stride, MN-major when the other
// one has; anything else is not a layout the GEMM reads.
void layout_of(const char* name, const at::Tensor& t, int k_dim, bool* k_major, int64_t* ld) {
  const int mn_dim = 1 - k_dim;
  if (t.stride(k_dim) == 1 || t.size(k_dim) == 1) {
    *k_major = true;
    *ld = t.size(mn_dim) == 1 ? t.size(k_dim) : t.stride(mn_dim);
  } else if (t.stride(mn_dim) == 1 || t.size(mn_dim) == 1) {
    *k_major = false;
    *ld = t.stride(k_dim);
  } else {
    TORCH_CHECK_VALUE(false, "hopper.gemm: ", name, " has shape ", shape_str(t),
                      ": one of its dimensions must have stride 1 (row- or column-major; call .contiguous())");
  }
}

at::Tensor gemm(const at::Tensor& a, const at::Tensor& b, std::optional<at::ScalarType> out_dtype, bool b_nk) {
  const char* op = "hopper.gemm";
  check_cuda_sm90(op, "a", a);
  check_cuda_sm90(op, "b", b);
  TORCH_CHECK_VALUE(a.device() == b.device(), op, ": a is on ", a.device(), " but b on ", b.device());
  TORCH_CHECK_TYPE(a.scalar_type() == at::kBFloat16, op, ": a must be bfloat16, got ", a.scalar_type());
  TORCH_CHECK_TYPE(b.scalar_type() == at::kBFloat16, op, ": b must be bfloat16, got ", b.scalar_type());
  TORCH_CHECK_VALUE(a.dim() == 2, op, ": a must be 2-D (M x K), got ", a.dim(), "-D");
  TORCH_CHECK_VALUE(b.dim() == 2, op, ": b must be 2-D (", b_nk ? "N x K" : "K x N", "), got ", b.dim(), "-D");
  const at::ScalarType out = out_dtype.value_or(at::kBFloat16);
  TORCH_CHECK_TYPE(out == at::kBFloat16 || out == at::kFloat, op, ": out_dtype must be bfloat16 or float32, got ", out);
  const int64_t M = a.size(0), K = a.size(1);
  const int64_t N = b_nk ? b.size(0) : b.size(1), Kb = b_nk ? b.size(1) : b.size(0);
  TORCH_CHECK_VALUE(K == Kb, op, ": a is ", M, " x ", K, " but b is ", b.size(0), " x ", b.size(1), " (",
                    b_nk ? "N x K" : "K x N", "): K differs");
  const int64_t dim_limit = (int64_t(1) << 31) - 1;
  TORCH_CHECK_VALUE(M <= dim_limit && N <= dim_limit && K <= dim_limit, op, ": a is ", M, " x ", K,
                    " and b gives N = ", N, ": the kernel takes at most 2^31-1 along each of M, N and K");
  at::Tensor c = allocate(op, "the output", {M, N}, a.options().dtype(out));
  if (M == 0 || N == 0) return c;
  if (K == 0) return c.zero_();
  hopper_torch::gemm_args g;
  g.device = a.get_device();
  g.M = M, g.N = N, g.K = K;
  layout_of("a", a, 1, &g.a_k_major, &g.lda);
  // b as the library's N x K operand: b itself (nk), or its transpose (kn).
  const at::Tensor bt = b_nk ? b : b.t();
  layout_of("b", bt, 1, &g.b_k_major, &g.ldb);
  g.out_f32 = out == at::kFloat;
  g.ldc = N;
  // TMA reads rows that start on 16-byte boundaries, from 16-byte aligned bases. Said here in the
  // operator's terms (which dimension to pad), before the library would say it in its own (lda).
  const auto check_rows = [&](const char* name, const at::Tensor& t, int64_t ld, int64_t elem, const char* pad) {
    TORCH_CHECK_VALUE((ld * elem) % 16 == 0, op, ": ", name, " has shape ", shape_str(t), ": its rows start every ",
                      ld * elem, " bytes, and the kernel needs a multiple of 16 (", pad, " a multiple of ", 16 / elem,
                      "; pad it)");
    TORCH_CHECK_VALUE(reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0, op, ": ", name,
                      "'s data is not 16-byte aligned (a view at an offset of ", t.storage_offset(),
                      " elements; call .contiguous())");
  };
  check_rows("a", a, g.lda, 2, g.a_k_major ? "K" : "M");
  check_rows("b", b, g.ldb, 2, g.b_k_major ? "K" : "N");
  TORCH_CHECK_VALUE((N * c.element_size()) % 16 == 0, op, ": the output has N = ", N, " columns of ", c.scalar_type(),
                    ": its rows must be a multiple of 16 bytes (N a multiple of ", 16 / c.element_size(), "; pad b)");
  g.A = a.data_ptr(), g.B = b.data_ptr(), g.C = c.data_ptr();
  const c10::cuda::CUDAGuard guard(a.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  hopper_torch::workspace_need need{};
  library_call([&] { need = hopper_torch::gemm_prepare(g); });
  at::Tensor ws;  // from the caching allocator, freed in stream order after the kernel
  if (need.bytes > 0) {
    ws = allocate(op, "the split-K workspace", {int64_t(need.bytes)}, a.options().dtype(at::kByte));
    const cudaError_t e = cudaMemsetAsync(static_cast<char*>(ws.data_ptr()) + need.counters_offset, 0,
                                          need.bytes - need.counters_offset, stream);
    TORCH_CHECK(e == cudaSuccess, op, ": cudaMemsetAsync of the workspace counters: ", cudaGetErrorString(e));
  }
  library_call([&] { hopper_torch::gemm_run(g, need.bytes ? ws.data_ptr() : nullptr, stream); });
  return c;
}

void check_stream_operand(const char* op, const char* name, const at::Tensor& t) {
  check_cuda_sm90(op, name, t);
  TORCH_CHECK_VALUE(t.is_contiguous(), op, ": ", name, " has shape ", shape_str(t),
                    " and is not contiguous; the streaming kernels read and write one contiguous range "
                    "(call .contiguous())");
}

void copy_(at::Tensor& dst, const at::Tensor& src) {
  const char* op = "hopper.copy_";
  check_stream_operand(op, "dst", dst);
  check_stream_operand(op, "src", src);
  TORCH_CHECK_VALUE(dst.device() == src.device(), op, ": dst is on ", dst.device(), " but src on ", src.device());
  TORCH_CHECK_TYPE(dst.scalar_type() == src.scalar_type(), op, ": dst is ", dst.scalar_type(), " but src is ",
                   src.scalar_type(), " (no conversion; use Tensor.copy_)");
  TORCH_CHECK_VALUE(dst.sizes() == src.sizes(), op, ": dst has shape ", list_str(dst.sizes()), " but src ",
                    list_str(src.sizes()));
  const uint64_t bytes = uint64_t(src.numel()) * uint64_t(src.element_size());
  if (bytes == 0) return;
  const c10::cuda::CUDAGuard guard(dst.device());
  library_call(
      [&] { hopper_torch::copy_run(dst.data_ptr(), src.data_ptr(), bytes, at::cuda::getCurrentCUDAStream()); });
}

at::Tensor axpb(const at::Tensor& x, double a, double b) {
  const char* op = "hopper.axpb";
  check_stream_operand(op, "x", x);
  TORCH_CHECK_TYPE(x.scalar_type() == at::kBFloat16, op, ": x must be bfloat16, got ", x.scalar_type());
  at::Tensor y = at::empty_like(x);
  if (x.numel() == 0) return y;
  const c10::cuda::CUDAGuard guard(x.device());
  library_call([&] {
    hopper_torch::axpb_run(y.data_ptr(), x.data_ptr(), uint64_t(x.numel()), float(a), float(b),
                           at::cuda::getCurrentCUDAStream());
  });
  return y;
}

// q (batch, seq_q, heads, head_dim), k and v (batch, seq_k, kv_heads, head_dim), bf16, the head
// dimension contiguous: out like q (contiguous) and the row log-sum-exp (batch, heads, seq_q) fp32.
std::tuple<at::Tensor, at::Tensor> attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                                             std::optional<double> scale, bool return_lse) {
  const char* op = "hopper.attention";
  const std::pair<const char*, const at::Tensor*> args[] = {{"q", &q}, {"k", &k}, {"v", &v}};
  for (const auto& [name, t] : args) {
    check_cuda_sm90(op, name, *t);
    TORCH_CHECK_VALUE(t->device() == q.device(), op, ": q is on ", q.device(), " but ", name, " on ", t->device());
    TORCH_CHECK_TYPE(t->scalar_type() == at::kBFloat16, op, ": ", name, " must be bfloat16, got ", t->scalar_type());
    TORCH_CHECK_VALUE(t->dim() == 4, op, ": ", name, " must be 4-D (batch, seq, heads, head_dim), got ", t->dim(),
                      "-D");
    TORCH_CHECK_VALUE(t->stride(3) == 1 || t->size(3) == 1, op, ": ", name, " has shape ", shape_str(*t),
                      ": its head dimension must be contiguous (stride 1)");
  }
  TORCH_CHECK_VALUE(k.sizes() == v.sizes(), op, ": k has shape ", list_str(k.sizes()), " but v ", list_str(v.sizes()));
  TORCH_CHECK_VALUE(k.size(0) == q.size(0), op, ": q has batch ", q.size(0), " but k ", k.size(0));
  TORCH_CHECK_VALUE(k.size(3) == q.size(3), op, ": q has head_dim ", q.size(3), " but k ", k.size(3));
  TORCH_CHECK_VALUE(k.size(2) > 0 && q.size(2) % k.size(2) == 0, op, ": k's ", k.size(2), " heads do not divide q's ",
                    q.size(2));
  if (scale) TORCH_CHECK_VALUE(*scale > 0, op, ": scale must be positive, got ", *scale);
  at::Tensor out = allocate(op, "the output", q.sizes(), q.options());
  at::Tensor lse = allocate(op, "the log-sum-exp", {q.size(0), q.size(2), q.size(1)}, q.options().dtype(at::kFloat));
  if (q.numel() == 0) return {out, lse};
  TORCH_CHECK_VALUE(k.size(1) > 0, op, ": k and v have seq_k = 0 and q does not (softmax over no keys)");
  hopper_torch::attention_args a;
  a.device = q.get_device();
  a.batch = q.size(0), a.seq_q = q.size(1), a.heads = q.size(2), a.head_dim = q.size(3);
  a.seq_k = k.size(1), a.kv_heads = k.size(2);
  a.causal = causal;
  a.scale = scale.value_or(0.0);
  const auto strides = [](const at::Tensor& t, int64_t(&s)[3]) {
    s[0] = t.stride(0), s[1] = t.stride(1), s[2] = t.stride(2);
  };
  strides(q, a.q_stride), strides(k, a.k_stride), strides(v, a.v_stride), strides(out, a.o_stride);
  a.Q = q.data_ptr(), a.K = k.data_ptr(), a.V = v.data_ptr(), a.O = out.data_ptr();
  a.lse = return_lse ? lse.data_ptr<float>() : nullptr;
  const c10::cuda::CUDAGuard guard(q.device());
  library_call([&] { hopper_torch::attention_run(a, at::cuda::getCurrentCUDAStream()); });
  return {out, lse};
}

int64_t cached_plans() { return int64_t(hopper_torch::gemm_cached_plans()); }

}  // namespace

TORCH_LIBRARY(hopper, m) {
  m.def("gemm(Tensor a, Tensor b, ScalarType? out_dtype=None, bool b_nk=True) -> Tensor");
  m.def("copy_(Tensor(a!) dst, Tensor src) -> ()");
  m.def("axpb(Tensor x, float a, float b) -> Tensor");
  m.def(
      "attention(Tensor q, Tensor k, Tensor v, bool causal=False, float? scale=None, bool return_lse=False) -> "
      "(Tensor, Tensor)");
  m.def("cached_plans() -> int", &cached_plans);
}

TORCH_LIBRARY_IMPL(hopper, CUDA, m) {
  m.impl("gemm", &gemm);
  m.impl("copy_", &copy_);
  m.impl("axpb", &axpb);
  m.impl("attention", &attention);
}

// Tensors on the CPU reach the same functions, whose first check names the argument that is not
// a CUDA tensor (instead of the dispatcher's "could not run with arguments from the CPU backend").
TORCH_LIBRARY_IMPL(hopper, CPU, m) {
  m.impl("gemm", &gemm);
  m.impl("copy_", &copy_);
  m.impl("axpb", &axpb);
  m.impl("attention", &attention);
}

// The Python module hopper._C: importing it registers the operators above.
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.doc() = "hopper-async's torch operators (torch.ops.hopper)"; }
