// The GEMM's benchmark shapes, one source for both benchmarks and the host tests: bench_gemm's
// square and named shapes, and the shapes models run: the linear layers of public model
// configurations, each C = A . W^T with A of M tokens (M x K, K-major) and the layer's weight W
// (N x K, K-major), for the token counts of prefill and of decode. Plain C++: the benchmarks time
// them and host tests check the tile rule's choices on them.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hopper_bench {

// bench_gemm's square and named shapes: `named` ones make its geomean.
struct shape {
  int64_t M, N, K;
  bool named;
};
inline const std::vector<shape>& benchmark_shapes() {
  static const std::vector<shape> shapes = {
      {8192, 8192, 8192, true},    {4096, 4096, 4096, true},  {2048, 2048, 2048, true},  {16384, 16384, 4096, true},
      {8192, 8192, 1024, true},    {4096, 14336, 4096, true}, {128, 8192, 8192, true},   {512, 512, 512, false},
      {1024, 1024, 1024, false},   {3072, 3072, 3072, false}, {6144, 6144, 6144, false}, {12288, 12288, 12288, false},
      {16384, 16384, 16384, false}};
  return shapes;
}

// Off-grid shapes, held out from the tile rule's calibration: every combination of token counts
// and weight shapes that no sweep and no model entry above has (dimensions that are multiples of
// 32 or 64 between the powers of two, some from other public models: 11008 and 13824 are
// Llama-2 7B and 13B MLP widths, 2880, 4544 and 5120 hidden sizes, 20480 Yi-34B's MLP width). Each M meets every (N,
// K). Each set was held out from the rule's corrections made before it was first measured, and only from those
// (docs/gemm.md, "Off the grid").
inline std::vector<shape> offgrid_shapes(int set) {
  std::vector<int64_t> ms;
  std::vector<std::pair<int64_t, int64_t>> nk;
  if (set == 1) {
    ms = {24, 96, 192, 384, 1536};
    nk = {{320, 2880}, {704, 5120}, {1344, 4096}, {2880, 2880}, {5120, 13824}, {11008, 4096}};
  } else if (set == 2) {
    ms = {40, 160, 320, 640, 2304};
    nk = {{448, 3072}, {960, 6144}, {1728, 2560}, {3456, 4608}, {6912, 3072}, {13824, 5120}};
  } else if (set == 3) {
    ms = {48, 224, 448, 832, 3200};
    nk = {{384, 4096}, {832, 3584}, {2112, 2048}, {4224, 5632}, {7680, 2560}, {17920, 3072}};
  } else if (set == 4) {
    ms = {56, 288, 544, 1216, 2560};
    nk = {{640, 4544}, {1216, 2304}, {2624, 3840}, {4544, 4544}, {9728, 2560}, {20480, 7168}};
  } else {
    throw std::invalid_argument("offgrid_shapes: set " + std::to_string(set) + " is not 1..4");
  }
  std::vector<shape> out;
  for (int64_t m : ms)
    for (const auto& [n, k] : nk) out.push_back({m, n, k, false});
  return out;
}

struct model_layer {
  const char* model;
  const char* layer;
  int64_t N, K;
};

// Llama-3 8B and 70B (hidden 4096 / 8192, 8 KV heads of 128, MLP 14336 / 28672, vocabulary
// 128256), Qwen2.5 7B (hidden 3584, 4 KV heads of 128, MLP 18944), DeepSeek-V3 (hidden 7168; MLA
// with a query rank of 1536 and a KV rank of 512 plus 64 rotary dimensions, 128 heads; experts
// of 2048).
inline const std::vector<model_layer>& model_layers() {
  static const std::vector<model_layer> layers = {
      {"llama3_8b", "qkv", 6144, 4096},
      {"llama3_8b", "o", 4096, 4096},
      {"llama3_8b", "gate_up", 28672, 4096},
      {"llama3_8b", "down", 4096, 14336},
      {"llama3_8b", "lm_head", 128256, 4096},
      {"llama3_70b", "qkv", 10240, 8192},
      {"llama3_70b", "o", 8192, 8192},
      {"llama3_70b", "gate_up", 57344, 8192},
      {"llama3_70b", "down", 8192, 28672},
      {"qwen2.5_7b", "qkv", 4608, 3584},
      {"qwen2.5_7b", "o", 3584, 3584},
      {"qwen2.5_7b", "gate_up", 37888, 3584},
      {"qwen2.5_7b", "down", 3584, 18944},
      {"deepseek_v3", "q_a", 1536, 7168},
      {"deepseek_v3", "kv_a", 576, 7168},
      {"deepseek_v3", "q_b", 24576, 1536},
      {"deepseek_v3", "kv_b", 32768, 512},
      {"deepseek_v3", "o", 7168, 16384},
      {"deepseek_v3", "expert_gate_up", 4096, 7168},
      {"deepseek_v3", "expert_down", 7168, 2048},
  };
  return layers;
}

// Tokens per GEMM: prefill and batched serving, then the decode regime (a memory-bound GEMV).
inline const std::vector<int64_t>& prefill_tokens() {
  static const std::vector<int64_t> m = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
  return m;
}
inline const std::vector<int64_t>& decode_tokens() {
  static const std::vector<int64_t> m = {1, 8, 16, 32};
  return m;
}

// "gemm_model/llama3_8b/qkv/M1024"
inline std::string corpus_name(const model_layer& l, int64_t M) {
  return std::string("gemm_model/") + l.model + "/" + l.layer + "/M" + std::to_string(M);
}

}  // namespace hopper_bench
