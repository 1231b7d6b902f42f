// The main job's two halves (apps/showcase.cu: the GPU; apps/showcase_model.cpp: the model,
// compiled as plain C++) and what they share.
#pragma once
#include <cstdlib>
#include <string>

namespace hopper::apps {

// Render the PNG where the tool can; the JSON is the result either way.
inline std::string render_png(const std::string& json) {
  const std::string png = json.substr(0, json.size() - 5) + ".png";
  const std::string cmd = "python3 tools/trace_png.py '" + json + "' '" + png + "' > /dev/null 2>&1";
  return std::system(cmd.c_str()) == 0 ? png : std::string();
}

// Without a GPU: the kernels' own bodies on the executable model; returns the exit status.
int run_model(const std::string& out, const std::string& why);

}  // namespace hopper::apps
