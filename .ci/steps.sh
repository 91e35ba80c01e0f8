# Sourced by .ci/run: timed steps, lanes of steps that run side by side, and the summary table.
#
#   step NAME CMD...   runs CMD (a simple command: a compound one goes through `bash -euo pipefail -c`),
#                      its output to this shell's stdout and to $CI_LOGS/NAME.log; appends a row
#                      (name, wall s, CPU s, tests, status) to $CI_LOGS/steps.tsv; returns CMD's status.
#   lane NAME FN       runs the function FN (a sequence of steps, the first failure ending it) in the
#                      background, all its output in $CI_LOGS/lane-NAME.log.
#   await_lanes        waits for every lane, then prints each lane's log whole, in the order the lanes
#                      were started; returns 1 if any lane failed, after naming the step that failed.
#   summary            the table of every step, in the order they started.
# Needs CI_LOGS (an empty directory).

ci_now() { date +%s.%N; }
ci_since() { awk -v a="$1" -v b="$(ci_now)" 'BEGIN { printf "%.0f", b - a }'; }
CI_START="$(ci_now)"
CI_LANES=()
CI_PIDS=()

# The tests a step's log reports: node's runner (spec reporter), the conformance suite, cargo test,
# the demo's last line. Empty when the log names none.
ci_tests() {
  local log=$1 n
  if n=$(grep -E '^(ℹ|#) pass [0-9]+$' "$log" | grep -oE '[0-9]+' | awk '{ n += $1 } END { if (NR) print n }') && [[ -n $n ]]; then
    echo "$n"
  elif n=$(grep -oE '[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$log" | tail -n 1 | cut -d' ' -f1) && [[ -n $n ]]; then
    echo "$n"
  elif grep -qE '^test result: ' "$log"; then
    grep -oE '^test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{ n += $4 } END { print n }'
  elif [[ "$(tail -n 1 "$log")" == "demo: done" ]]; then
    echo 1
  fi
}

step() {
  local name=$1
  shift
  local log="$CI_LOGS/$name.log" t0 t1 rc
  echo "== $name"
  t0=$(ci_now)
  local at
  at=$(ci_since "$CI_START")
  # The step's own CPU: user + system time of its processes, from the shell's `times` before and
  # after, taken in a subshell so that other lanes' children are not counted.
  rc=0
  (
    "$@" 2>&1 | tee "$log"
    s=${PIPESTATUS[0]}
    times >"$log.cpu"
    exit "$s"
  ) || rc=$?
  local wall cpu
  wall=$(ci_since "$t0")
  cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= NF; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] } printf "%.0f", t }' "$log.cpu")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$wall" "$cpu" "$(ci_tests "$log")" \
    "$([[ $rc == 0 ]] && echo ok || echo "FAILED ($rc)")" "$at" >>"$CI_LOGS/steps.tsv"
  return "$rc"
}

lane() {
  local name=$1 fn=$2
  CI_LANES+=("$name")
  (set -e; "$fn" >"$CI_LOGS/lane-$name.log" 2>&1) &
  CI_PIDS+=("$!")
}

await_lanes() {
  local i rc=0 failed=()
  for i in "${!CI_PIDS[@]}"; do
    wait "${CI_PIDS[$i]}" || failed+=("${CI_LANES[$i]}")
  done
  for i in "${!CI_LANES[@]}"; do
    echo "==== lane ${CI_LANES[$i]} (its whole output, as it ran)"
    cat "$CI_LOGS/lane-${CI_LANES[$i]}.log"
  done
  if ((${#failed[@]})); then
    echo "FAILED: lane(s) ${failed[*]}; the failing step:" >&2
    awk -F'\t' '$5 != "ok" { print "  " $1 ": " $5 }' "$CI_LOGS/steps.tsv" >&2
    rc=1
  fi
  CI_LANES=()
  CI_PIDS=()
  return "$rc"
}

summary() {
  echo "== steps (seconds; 'at' is when the step started, from CI's start; lanes overlap, so CPU can pass wall)"
  {
    sort -t$'\t' -k6,6n "$CI_LOGS/steps.tsv"
    printf 'total\t%s\t-\t-\t-\t-\n' "$(ci_since "$CI_START")"
  } | awk -F'\t' 'BEGIN { printf "%-28s %6s %6s %6s %7s  %s\n", "step", "at", "wall", "cpu", "tests", "status" }
    { printf "%-28s %6s %6s %6s %7s  %s\n", $1, $6, $2, $3, ($4 == "" ? "-" : $4), $5 }'
}
