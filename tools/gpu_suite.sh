#!/usr/bin/env bash
# The one GPU run: build everything (or take binaries staged by tools/stage_gpu.sh), run every
# GPU test executable, every benchmark and the showcase, and write into the folder given:
#   summary.txt   what ran and its headline figures (RATIO/SUMMARY lines, test counts)
#   junit.tgz     one GoogleTest JUnit XML per test executable
#   results.tgz   benchmark JSON, traces, plots
#   logs.tgz      every log
#   zoo_sanitizer.tsv, zoo_model.tsv, zoo_table.md   the bug zoo on the model, the H200 and under
#                 compute-sanitizer (tools/zoo_sanitizer.sh)
# Usage: tools/gpu_suite.sh OUT_DIR [BIN_DIR]
# Optional: HOPPER_TESTS (regex over test executables, '-' for none), HOPPER_BENCH (regex over
# bench executables, '-' for none), HOPPER_BENCH_ARGS (extra Google Benchmark flags),
# HOPPER_SANITIZE (compute-sanitizer tools after the tests, comma-separated; default
# memcheck,racecheck,synccheck,initcheck; 0 for none), HOPPER_SANITIZE_TIMEOUT (s per run, 120),
# HOPPER_SANITIZE_BUDGET (s for all sanitizer runs, 300), HOPPER_VENV (Python for the plots,
# default build/venv as .ci/run makes it, else python3).
set -uo pipefail
out=${1:?usage: tools/gpu_suite.sh OUT_DIR [BIN_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" && out=$(cd "$out" && pwd)
work=$out/work; logs=$work/logs; results=$work/results; junit=$work/junit
mkdir -p "$logs" "$results" "$junit"
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

say "== hopper-async GPU suite, $(date -u +%FT%TZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv,noheader 2>&1 | sed 's/^/   gpu: /' | tee -a "$summary"

if [ $# -ge 2 ]; then
  bin=$(cd "$2" && pwd)
  export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  tests=("$bin"/tests/gpu_*) benches=("$bin"/bench/*) showcase=$bin/showcase
  say "binaries: prebuilt in $2"
else
  build=${HOPPER_BUILD_DIR:-$root/build/gpu}
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  t0=$(date +%s)
  cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DHOPPER_BUILD_TESTS=ON \
    -DHOPPER_BUILD_BENCH=ON -DHOPPER_BUILD_APPS=ON >"$logs/build.log" 2>&1
  # Keep going past a failing target so one broken file does not hide every other result.
  cmake --build "$build" --parallel "$(nproc)" -- -k 0 >>"$logs/build.log" 2>&1 ||
    { say "BUILD HAD ERRORS (logs/build.log):"; grep -E "error|FAILED" "$logs/build.log" | head -20 | tee -a "$summary"; }
  say "build: $(( $(date +%s) - t0 )) s"
  tests=("$build"/tests/gpu_*) benches=("$build"/bench/*) showcase=$build/apps/showcase
fi

# GPU tests: each executable once (one CUDA context each), with a deadline, JUnit XML out.
passed=0 failed=0 skipped=0
if [ "${HOPPER_TESTS:-.}" != "-" ]; then
  for t in "${tests[@]}"; do
    [ -x "$t" ] && [ -f "$t" ] || continue
    name=$(basename "$t")
    [[ $name =~ ${HOPPER_TESTS:-.} ]] || continue
    t0=$(date +%s)
    timeout -k 5 "${HOPPER_TEST_TIMEOUT:-240}" "$t" --gtest_output="xml:$junit/$name.xml" >"$logs/$name.log" 2>&1
    rc=$?
    p=$(grep -c "^\[       OK \]" "$logs/$name.log"); f=$(grep -c "^\[  FAILED  \].*ms)" "$logs/$name.log")
    s=$(grep -c "^\[  SKIPPED \].*ms)" "$logs/$name.log")
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    say "test $name: rc=$rc passed=$p failed=$f skipped=$s $(( $(date +%s) - t0 )) s"
    grep -E "^\[  FAILED  \].*ms\)|^SUMMARY" "$logs/$name.log" | head -20 | tee -a "$summary"
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && say "   TIMED OUT: $name"
  done
fi
say "TESTS: passed=$passed failed=$failed skipped=$skipped"

# The installed package's consumers (tests/package: a separate project that calls the kernels from
# the installed tree): prebuilt, the executables staged in BIN_DIR/package; else the package test.
if [ $# -ge 2 ]; then
  for c in "$bin"/package/*; do
    [ -x "$c" ] && [ -f "$c" ] || continue
    timeout -k 5 120 "$c" >"$logs/package_$(basename "$c").log" 2>&1
    say "package $(basename "$c"): rc=$? $(tail -1 "$logs/package_$(basename "$c").log")"
  done
else
  ctest --test-dir "$build" -R '^package_full$' --output-on-failure >"$logs/package.log" 2>&1
  say "package: rc=$? $(grep -m1 -E 'kernels consumer' "$logs/package.log")"
fi

# compute-sanitizer: each tool on each GPU test executable, one short test each (a sanitized run
# is 10-100x slower), every run under a deadline and all of them under a budget. One line per
# tool and executable: errors counted from the tool's summary, and rc (99: the tool found errors).
declare -A sanitize_filter=(
  [gpu_conformance_cluster_named]=ConformanceNamedBarrier.TwoSetsArriveSync_S20
  [gpu_conformance_mbarrier]=ConformanceMbarrier.TestWaitTryWaitAnswers_S13
  [gpu_conformance_ordering]=ConformanceOrdering.ProxyFenceThenBulkStore_S8_1_S9_3:ConformanceOrdering.WarGuardedByEmptyBarrierEachLane_S16
  [gpu_gemm_correctness]=GemmSingleTile.OneKBlock128x128NoCluster
  [gpu_model_differential]=ModelDifferential.RandomSequencesAgreeWithTheH200
  [gpu_pipeline_stream]=PipelineGpu.EachLaneReleases
  [gpu_stream_copy]=StreamCopyPerTile.OddTilesCopyExactly:StreamAxpbBf16.EveryShapeMatchesTheReference
  [gpu_tma_tensor_copy]=TmaTensorLoad.NanFillMarksOutOfBoundsFloats
)
# Extra options per tool and executable. The differential test keeps one mbarrier per thread
# (128 per block, in an array the tool cannot count): synccheck tracks too few by default
# ("overflow of tracked cuda::barrier structures"), and the launch then fails under it.
declare -A sanitize_opts=(
  [synccheck:gpu_model_differential]="--num-cuda-barriers 128"
  [racecheck:gpu_model_differential]="--num-cuda-barriers 128"
)
declare -A sanitize_skip=(  # no test of these is meant to be clean
  [gpu_hang_trap]="its test makes a child process trap on purpose"
  [gpu_hazard_lab]="every case also runs unprotected, racing on purpose"
  [gpu_bug_zoo]="tools/zoo_sanitizer.sh runs each of its cases alone under racecheck, synccheck and memcheck (the ZOO lines)"
)
tools=${HOPPER_SANITIZE:-memcheck,racecheck,synccheck,initcheck}
if [ "$tools" = 0 ] || [ "${HOPPER_TESTS:-.}" = "-" ]; then
  say "SANITIZER: not run (HOPPER_SANITIZE=0 or HOPPER_TESTS=-)"
elif ! command -v compute-sanitizer >/dev/null; then
  say "SANITIZER: not run, compute-sanitizer is not on PATH"
else
  s_timeout=${HOPPER_SANITIZE_TIMEOUT:-120} s_end=$(( $(date +%s) + ${HOPPER_SANITIZE_BUDGET:-300} ))
  s_runs=0 s_dirty=0 s_unsupported=0
  for tool in ${tools//,/ }; do
    for t in "${tests[@]}"; do
      [ -x "$t" ] && [ -f "$t" ] || continue
      name=$(basename "$t")
      [[ $name =~ ${HOPPER_TESTS:-.} ]] || continue
      tag="SANITIZER $tool $name"
      if [ -n "${sanitize_skip[$name]:-}" ]; then say "$tag: skipped, ${sanitize_skip[$name]}"; continue; fi
      if [ -z "${sanitize_filter[$name]:-}" ]; then say "$tag: skipped, no short test named for it in tools/gpu_suite.sh"; continue; fi
      if [ "$s_unsupported" = 1 ]; then say "$tag: skipped, compute-sanitizer does not support this device here"; continue; fi
      if [ "$(date +%s)" -ge "$s_end" ]; then say "$tag: not run, HOPPER_SANITIZE_BUDGET spent"; continue; fi
      log=$logs/sanitize_${tool}_$name.log t0=$(date +%s)
      # shellcheck disable=SC2086  # the extra options are words
      timeout -k 5 "$s_timeout" compute-sanitizer --tool "$tool" --error-exitcode 99 ${sanitize_opts[$tool:$name]:-} \
        "$t" --gtest_filter="${sanitize_filter[$name]}" >"$log" 2>&1
      rc=$? s_runs=$((s_runs + 1))
      # memcheck, synccheck, initcheck: "ERROR SUMMARY: N errors"; racecheck: "(N errors, M warnings)".
      n=$(grep -Eo "SUMMARY: [0-9]+ error|\([0-9]+ error" "$log" | tail -1 | grep -Eo "[0-9]+")
      took="$(( $(date +%s) - t0 )) s"
      if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        say "$tag: TIMED OUT after $s_timeout s (rc $rc)"; s_dirty=$((s_dirty + 1))
      elif grep -q "^\[==========\] Running 0 tests" "$log"; then
        say "$tag: --gtest_filter=${sanitize_filter[$name]} matched no test (rename it in tools/gpu_suite.sh)"
        s_dirty=$((s_dirty + 1))
      elif grep -q "^\[  FAILED  \]" "$log"; then
        say "$tag: the test FAILED under the tool (rc $rc, $took)"; s_dirty=$((s_dirty + 1))
      elif [ "$tool" = racecheck ]; then
        # Every reported pair counts unless tools/racecheck_known.txt names its pattern for this
        # executable (tools/racecheck_known.py; docs/sanitizers.md).
        verdict=$(python3 "$root/tools/racecheck_known.py" "$log" "$name" "$root") && k=0 || k=1
        say "$tag: $verdict (rc $rc, $took)"; s_dirty=$((s_dirty + k))
      elif [ -n "$n" ]; then
        say "$tag: $n errors (rc $rc, $took)"; { [ "$n" -gt 0 ] || [ $rc -ne 0 ]; } && s_dirty=$((s_dirty + 1))
      else
        say "$tag: no error summary (rc $rc, $took): $(grep -m1 -E "^========= (Error|ERROR)" "$log" || tail -1 "$log")"
        s_dirty=$((s_dirty + 1))
      fi
      # Under gVisor compute-sanitizer refuses the device: the remaining runs would say the same.
      grep -q "Device not supported" "$log" && s_unsupported=1
    done
  done
  say "SANITIZER: $s_runs runs, $s_dirty with errors, a failed test or no summary (logs/sanitize_*.log)"
fi

# The bug zoo (tests/gpu/bug_zoo.cu): each case alone, plain and under racecheck, synccheck and
# memcheck, beside the model's verdicts (tools/zoo_sanitizer.sh), into zoo_sanitizer.tsv,
# zoo_model.tsv and zoo_table.md at the top of OUT_DIR. HOPPER_ZOO=0 skips it, HOPPER_SANITIZE=0
# leaves the tools out; ZOO_BUDGET (s, 150) bounds it.
zoo_dir=""
for t in "${tests[@]}"; do
  [ "$(basename "$t")" = gpu_bug_zoo ] && [ -x "$t" ] && zoo_dir=$(dirname "$t")
done
if [ "${HOPPER_ZOO:-1}" = 0 ] || [ "${HOPPER_TESTS:-.}" = "-" ] || ! [[ gpu_bug_zoo =~ ${HOPPER_TESTS:-.} ]]; then
  say "ZOO: not run (HOPPER_ZOO=0, or HOPPER_TESTS leaves gpu_bug_zoo out)"
elif [ -z "$zoo_dir" ]; then
  say "ZOO: not run, no gpu_bug_zoo built or staged"
else
  t0=$(date +%s)
  zoo_tools=${ZOO_TOOLS-racecheck,synccheck,memcheck}
  [ "$tools" = 0 ] && zoo_tools=""  # HOPPER_SANITIZE=0: the plain runs only
  ZOO_TOOLS=$zoo_tools ZOO_LOG_DIR=$logs/zoo "$root/tools/zoo_sanitizer.sh" "$out" "$zoo_dir" \
    >"$logs/zoo_sanitizer.log" 2>&1
  say "ZOO: rc=$? $(tail -1 "$logs/zoo_sanitizer.log") ($(( $(date +%s) - t0 )) s)"
  [ -f "$out/zoo_table.md" ] && tail -2 "$out/zoo_table.md" | while read -r l; do [ -n "$l" ] && say "ZOO $l"; done
fi

# The PyTorch package (python/): built from this tree with PyTorch's extension tools, its pytest
# suite against torch.matmul and Tensor.copy_, then its benchmark in one process. Skipped, saying
# why, where PyTorch is missing. HOPPER_TORCH=0 skips it.
if [ "${HOPPER_TORCH:-1}" = 0 ]; then
  say "TORCH: not run (HOPPER_TORCH=0)"
elif ! python3 -c "import torch" >/dev/null 2>&1; then
  say "TORCH: skipped, python3 cannot import torch"
else
  t0=$(date +%s)
  # The C++ compiler: HOPPER_TORCH_CXX, else the system's g++ where there is one (a toolchain with
  # only a static libstdc++, such as the H200 machine's $CXX, is refused by python/setup.py),
  # else $CXX as it is.
  torch_cxx=${HOPPER_TORCH_CXX:-$( [ -x /usr/bin/g++ ] && echo /usr/bin/g++ || echo "${CXX:-c++}")}
  if CXX=$torch_cxx MAX_JOBS=${MAX_JOBS:-8} python3 -m pip install --no-build-isolation --no-deps -q "$root/python" \
    >"$logs/torch_build.log" 2>&1; then
    say "TORCH: package built with CXX=$torch_cxx and installed ($(( $(date +%s) - t0 )) s)"
    python3 -m pytest -q -rfs "$root/python/tests" --junitxml="$junit/torch_tests.xml" >"$logs/torch_tests.log" 2>&1
    say "TORCH tests: rc $? $(tail -1 "$logs/torch_tests.log")"
    grep -E "^(FAILED|ERROR) " "$logs/torch_tests.log" | head -20 | cut -c1-300 | tee -a "$summary"
    python3 "$root/python/bench/bench_ops.py" "$results/bench_torch.json" >"$logs/torch_bench.log" 2>&1 ||
      say "TORCH bench: FAILED (rc $?, logs/torch_bench.log)"
    grep -E "^(RATIO|HOST)" "$logs/torch_bench.log" | while read -r l; do say "$l"; done
    python3 "$root/python/bench/bench_attention.py" "$results/bench_attention.json" >"$logs/attention_bench.log" 2>&1 ||
      say "ATTENTION bench: FAILED (rc $?, logs/attention_bench.log)"
    grep -E "^RATIO" "$logs/attention_bench.log" | while read -r l; do say "$l"; done
  else
    say "TORCH: the package did not build (logs/torch_build.log): $(grep -m1 -iE "error" "$logs/torch_build.log")"
  fi
fi

# Benchmarks: JSON per executable, headline lines into the summary.
if [ "${HOPPER_BENCH:-.}" != "-" ]; then
  for b in "${benches[@]}"; do
    [ -x "$b" ] && [ -f "$b" ] || continue
    name=$(basename "$b")
    [[ $name =~ ${HOPPER_BENCH:-.} ]] || continue
    t0=$(date +%s)
    (cd "$results" && timeout -k 5 "${HOPPER_BENCH_TIMEOUT:-400}" "$b" --benchmark_out="$results/$name.json" \
        --benchmark_out_format=json ${HOPPER_BENCH_ARGS:-}) >"$logs/$name.log" 2>&1
    say "bench $name: rc=$? $(( $(date +%s) - t0 )) s"
    grep -E "^(SUMMARY|RATIO)" "$logs/$name.log" | tee -a "$summary"
  done
fi

# Main job (the showcase), which writes its trace into results.
if [ -x "$showcase" ] && [ "${HOPPER_SHOWCASE:-1}" = 1 ]; then
  (cd "$root" && timeout -k 10 120 "$showcase" "$results") >"$logs/showcase.log" 2>&1
  say "showcase: rc=$?"; tail -8 "$logs/showcase.log" | tee -a "$summary"
fi

# Plots (matplotlib): the Python of build/venv where .ci/run made one, else python3. Each plot
# says on one line what it drew or why it drew nothing.
venv=${HOPPER_VENV:-$root/build/venv}
py=python3; [ -x "$venv/bin/python3" ] && py=$venv/bin/python3
if ! "$py" -c "import matplotlib" >/dev/null 2>&1; then
  say "plots: none drawn, matplotlib is missing for $py (pip install -r tools/requirements.txt; .ci/run makes build/venv)"
else
  plot() {  # plot NAME ARGS...: run one plot script, log it, one summary line
    local o rc
    o=$("$py" "$@" 2>&1); rc=$?
    printf '%s\n' "$o" >>"$logs/plots.log"
    say "plot $(basename "$1"): $(printf '%s' "$o" | tail -1)$([ $rc -eq 0 ] || echo " (rc $rc)")"
  }
  for p in "$root"/tools/plot_*.py; do [ -f "$p" ] && plot "$p" "$results"; done
  # trace_png.py takes one trace file (the showcase's pipeline_trace_*.json), not the folder.
  traces=("$results"/*trace*.json)
  if [ -f "${traces[0]}" ]; then
    for j in "${traces[@]}"; do plot "$root/tools/trace_png.py" "$j"; done
  else
    say "plot trace_png.py: no trace JSON in results, no timeline drawn"
  fi
fi
tar -C "$work" -czf "$out/logs.tgz" logs
tar -C "$work" -czf "$out/results.tgz" results
tar -C "$work" -czf "$out/junit.tgz" junit
rm -rf "$work"
say "== done"
