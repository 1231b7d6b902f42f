#!/usr/bin/env bash
# The bug zoo under compute-sanitizer: every case of tests/gpu/bug_zoo.cu run alone (one process
# each, HOPPER_ZOO_CASE=<case>), plain and under racecheck, synccheck and memcheck, each run under
# a deadline, and one row a case in OUT/zoo_sanitizer.tsv:
#   case  role  twin  plain  racecheck  synccheck  memcheck  wrong  notes
# role: bug, twin (a bug's correct twin) or correct (a protocol a naive checker rejects); twin: a
# bug's twin case. plain: what the GPU did without a tool, correct / wrong / trapped (a bounded
# wait timed out) / error:NAME (the kernel failed otherwise). A tool's cell: clean, N hazards
# (racecheck) or N errors (then "+ M API": errors of CUDA calls, such as the failed synchronize
# after a trap), with "; trapped" or "; wrong" when the run under the tool ended so; or
# timeout, no summary, unsupported (the tool refuses the device), not run (ZOO_BUDGET spent).
# wrong: the plain run's wrong/checked output words. notes: each tool's first report line.
# Where BIN also holds host_bug_zoo_target (tools/stage_gpu.sh stages it), the model's verdicts
# go to OUT/zoo_model.tsv, and tools/zoo_table.py joins both into OUT/zoo_table.md.
#
# Usage: tools/zoo_sanitizer.sh OUT BIN       (BIN: the folder holding gpu_bug_zoo)
# Optional: ZOO_TOOLS (racecheck,synccheck,memcheck; empty: plain runs only), ZOO_JOBS (runs at once, 8), ZOO_TIMEOUT
# (s per run, 60), ZOO_BUDGET (s for all runs, 150), ZOO_LOG_DIR (OUT/zoo_logs),
# HOPPER_ZOO_INSTANCES and HOPPER_ZOO_LAUNCHES (the plain runs' sizes; sanitized runs launch once).
set -uo pipefail
out=${1:?usage: tools/zoo_sanitizer.sh OUT BIN}
bin=${2:?usage: tools/zoo_sanitizer.sh OUT BIN}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" && out=$(cd "$out" && pwd)
bin=$(cd "$bin" && pwd) || exit 2
exe=$bin/gpu_bug_zoo
[ -x "$exe" ] || { echo "zoo_sanitizer: no gpu_bug_zoo in $bin" >&2; exit 2; }
logs=${ZOO_LOG_DIR:-$out/zoo_logs}
mkdir -p "$logs"
tsv=$out/zoo_sanitizer.tsv
IFS=', ' read -ra tools <<<"${ZOO_TOOLS-racecheck,synccheck,memcheck}"  # empty: plain runs only
jobs_max=${ZOO_JOBS:-8}
timeout=${ZOO_TIMEOUT:-60}
start=$(date +%s)
end=$((start + ${ZOO_BUDGET:-150}))
have_tool=1
command -v compute-sanitizer >/dev/null || have_tool=0

mapfile -t cases < <("$exe" --gtest_filter=BugZooTable.List 2>/dev/null | grep '^ZOOCASE' | cut -f2-)
[ ${#cases[@]} -gt 0 ] || { echo "zoo_sanitizer: $exe listed no case" >&2; exit 2; }

# The model's verdicts, on the CPU while the GPU runs.
model_pid=""
if [ -x "$bin/host_bug_zoo_target" ]; then
  HOPPER_ZOO_MODEL_TSV=$out/zoo_model.tsv "$bin/host_bug_zoo_target" >"$logs/model.log" 2>&1 &
  model_pid=$!
fi

# run_one TOOL CASE: one process (TOOL plain: no sanitizer), its output in $logs/CASE.TOOL.log
# with a last line "ZOO_RC <exit status>".
run_one() {
  local tool=$1 name=$2 log=$logs/$2.$1.log
  if [ "$(date +%s)" -ge "$end" ]; then
    echo "ZOO_NOT_RUN" >"$log"
    return
  fi
  local cmd=("$exe" "--gtest_filter=Zoo/BugZoo.OnTheGpu/$name")
  if [ "$tool" = plain ]; then
    HOPPER_ZOO_CASE=$name timeout -k 5 "$timeout" "${cmd[@]}" >"$log" 2>&1
  else
    HOPPER_ZOO_CASE=$name HOPPER_ZOO_LAUNCHES=1 timeout -k 5 "$timeout" compute-sanitizer --tool "$tool" \
      "${cmd[@]}" >"$log" 2>&1
  fi
  echo "ZOO_RC $?" >>"$log"
}

runs=(plain)
[ $have_tool = 1 ] && runs+=("${tools[@]}")
pids=()
for tool in "${runs[@]}"; do  # every plain run first: a spent budget leaves out tools, not cases
  for row in "${cases[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    run_one "$tool" "${row%%$'\t'*}" &
    pids+=($!)
  done
done
wait "${pids[@]}"

# A tool that printed no summary may have failed beside another instance: run it once more, alone.
summary_re='RACECHECK SUMMARY|ERROR SUMMARY'
for row in "${cases[@]}"; do
  name=${row%%$'\t'*}
  [ $have_tool = 1 ] || break
  for tool in "${tools[@]}"; do
    log=$logs/$name.$tool.log
    grep -qE "$summary_re|ZOO_NOT_RUN|Device not supported" "$log" && continue
    grep -qE "^ZOO_RC (124|137)$" "$log" && continue
    run_one "$tool" "$name"
  done
done

# outcome LOG: what the case did in that run (correct, wrong, trapped, error:NAME, ...).
outcome() {
  local log=$1 v
  grep -q "^ZOO_NOT_RUN" "$log" && { echo "not run"; return; }
  grep -qE "^ZOO_RC (124|137)$" "$log" && { echo "timeout"; return; }
  v=$(grep -m1 -o $'ZOO\t.*' "$log" | cut -f4)
  if grep -q "hopper: mbarrier wait timed out" "$log" && [ "$v" != trapped ]; then v="trapped${v:+ ($v)}"; fi
  [ -n "$v" ] && echo "$v" || echo "no verdict (rc $(grep -m1 '^ZOO_RC' "$log" | cut -d' ' -f2))"
}

# cell TOOL LOG: the tool's count, and how the run ended when not correct.
cell() {
  local tool=$1 log=$2 n e w o
  [ $have_tool = 1 ] || { echo "no compute-sanitizer"; return; }
  o=$(outcome "$log")
  case $o in "not run" | timeout) echo "$o"; return ;; esac
  grep -q "Device not supported" "$log" && { echo "unsupported"; return; }
  if [ "$tool" = racecheck ]; then
    # RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)
    n=$(grep -Eo "RACECHECK SUMMARY: [0-9]+ hazard" "$log" | tail -1 | grep -Eo "[0-9]+")
    e=$(grep -Eo "\([0-9]+ error" "$log" | tail -1 | grep -Eo "[0-9]+")
    w=$(grep -Eo "[0-9]+ warning" "$log" | tail -1 | grep -Eo "[0-9]+")
    [ -n "$n" ] || { echo "no summary; $o"; return; }
    [ "$n" = 0 ] && n=clean || n="$n hazards ($e errors, $w warnings)"
  else
    n=$(grep -Eo "ERROR SUMMARY: [0-9]+ error" "$log" | tail -1 | grep -Eo "[0-9]+")
    [ -n "$n" ] || { echo "no summary; $o"; return; }
    # Errors of CUDA API calls (the failed launch of a kernel that trapped) are counted apart.
    local api
    api=$(grep -c "^========= Program hit" "$log")
    n=$((n - api))
    [ "$n" -le 0 ] && n=clean || n="$n errors"
    [ "$api" -gt 0 ] && n="$n + $api API"
  fi
  [ "$o" = correct ] && echo "$n" || echo "$n; $o"
}

# first LOG: the tool's first report line (what it found; an API error only when nothing else).
first() {
  local re="^========= +(Error|Warning|Invalid|Barrier|Race|Uninitialized|Misaligned|Out of|Cuda)"
  { grep -m1 -E "$re" "$1" || grep -m1 "^========= Program hit" "$1"; } | sed -E 's/^========= +//' | cut -c1-120
}

{
  printf 'case\trole\ttwin\tplain\tracecheck\tsynccheck\tmemcheck\twrong\tnotes\n'
  for row in "${cases[@]}"; do
    IFS=$'\t' read -r name role twin _ <<<"$row"
    plain=$(outcome "$logs/$name.plain.log")
    wrong=$(grep -m1 -o $'ZOO\t.*' "$logs/$name.plain.log" | cut -f5 | sed 's/^wrong=//')
    cells=() notes=""
    for tool in racecheck synccheck memcheck; do
      if [[ " ${tools[*]} " == *" $tool "* ]] && [ -f "$logs/$name.$tool.log" ]; then
        cells+=("$(cell "$tool" "$logs/$name.$tool.log")")
        f=$(first "$logs/$name.$tool.log")
        [ -n "$f" ] && notes+="${notes:+ | }$tool: $f"
      else
        cells+=("not run")
      fi
    done
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$role" "$twin" "$plain" "${cells[@]}" "${wrong:--}" \
      "${notes:--}"
  done
} >"$tsv"

if [ -n "$model_pid" ]; then
  wait "$model_pid" || echo "zoo_sanitizer: host_bug_zoo_target failed (see $logs/model.log)"
fi
table_args=("$tsv")
[ -s "$out/zoo_model.tsv" ] && table_args+=("$out/zoo_model.tsv")
python3 "$root/tools/zoo_table.py" "${table_args[@]}" >"$out/zoo_table.md" 2>"$logs/table.log" ||
  echo "zoo_sanitizer: zoo_table.py failed (see $logs/table.log)"
bugs=$(awk -F'\t' 'NR > 1 && $2 == "bug"' "$tsv" | wc -l)
twins=$(awk -F'\t' 'NR > 1 && $2 != "bug"' "$tsv" | wc -l)
bad=$(awk -F'\t' 'NR > 1 && $2 != "bug" && $4 != "correct"' "$tsv" | wc -l)
echo "zoo_sanitizer: ${#cases[@]} cases ($bugs bugs, $twins twins and correct protocols, $bad of those not" \
  "correct on the GPU), $(($(date +%s) - start)) s: $tsv"
[ "$bad" -eq 0 ]
