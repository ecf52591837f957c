#!/usr/bin/env bash
# One bounded fuzz run (ctest fuzz.<target>): fuzz_X SECONDS WORKDIR SEEDS DICT REGRESSIONS
#
# Starts from a fresh working corpus in WORKDIR/corpus (new inputs go there, never into the
# source tree), reads the seed corpus and the regression inputs (when that folder exists)
# as extra corpus folders, uses DICT when it exists, and fuzzes for SECONDS. A crash, a
# leak, a UBSan report, an input slower than 25 s or an out-of-memory fails the run; the
# input that did it lands in WORKDIR/artifacts/ and the command to replay it is printed.
# Either way the last line is the result, also written to WORKDIR/result.txt:
#   fuzz_url: 123456 execs in 45 s (2743/s), cov 1234, ft 5678, corpus 321 (+300), crashes 0
set -uo pipefail

if (($# != 6)); then
  echo "usage: $0 FUZZER SECONDS WORKDIR SEEDS DICT REGRESSIONS" >&2
  exit 2
fi
fuzzer="$1" seconds="$2" work="$3" seeds="$4" dict="$5" regressions="$6"
name="$(basename "${fuzzer}")"

rm -rf "${work}"
mkdir -p "${work}/corpus" "${work}/artifacts"
args=(-max_total_time="${seconds}" -print_final_stats=1 -timeout=25 -rss_limit_mb=2560
      -artifact_prefix="${work}/artifacts/" -close_fd_mask=1)
[[ -f "${dict}" ]] && args+=(-dict="${dict}")
dirs=("${work}/corpus" "${seeds}")
[[ -d "${regressions}" ]] && dirs+=("${regressions}")
seed_count="$(find "${seeds}" -type f | wc -l)"

# Leaks are real findings here (the targets free everything they make).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

start=${SECONDS}
"${fuzzer}" "${args[@]}" "${dirs[@]}" >"${work}/fuzz.log" 2>&1
status=$?
elapsed=$((SECONDS - start))

done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "${work}/fuzz.log" | tail -1)"
[[ -n "${done_line}" ]] || done_line="$(grep -E '^#[0-9]+[[:space:]]' "${work}/fuzz.log" | tail -1)"
field() { sed -nE "s/.*[[:space:]]$1:? ([0-9]+).*/\\1/p" <<<"${done_line}"; }
execs="$(grep -E '^stat::number_of_executed_units:' "${work}/fuzz.log" | awk '{print $2}' | tail -1)"
[[ -n "${execs}" ]] || execs="$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"${done_line}")"
execs="${execs:-0}"
per_s="$(grep -E '^stat::average_exec_per_sec:' "${work}/fuzz.log" | awk '{print $2}' | tail -1)"
cov="$(field cov)" ft="$(field ft)"
corpus="$(sed -nE 's/.*corp: ([0-9]+)\/.*/\1/p' <<<"${done_line}")"
crashes="$(find "${work}/artifacts" -type f | wc -l)"

result="${name}: ${execs} execs in ${elapsed} s (${per_s:-?}/s), cov ${cov:-?}, ft ${ft:-?}, corpus ${corpus:-?} (${seed_count} seeds), crashes ${crashes}"
if ((status != 0 || crashes > 0)) || [[ -z "${done_line}" ]]; then
  tail -n 120 "${work}/fuzz.log"
  for artifact in "${work}"/artifacts/*; do
    [[ -f "${artifact}" ]] || continue
    echo "${name}: reproduce with: ${fuzzer} ${artifact}"
  done
  echo "${result} (exit ${status}) FAILED"
  echo "${result} (exit ${status}) FAILED" >"${work}/result.txt"
  exit 1
fi
grep -E '^(INFO: seed corpus|#[0-9]+[[:space:]]+(INITED|DONE))' "${work}/fuzz.log"
echo "${result}"
echo "${result}" >"${work}/result.txt"
