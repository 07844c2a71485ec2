#!/usr/bin/env bash
# scripts/gpu-check end to end on a host, as a lent GPU would run it but with a stand-in for
# Nsight Compute: the session under its budget, the ncu step's log turned into the counters CSV,
# the report made again with them, and one archive holding results, counters and report.
# Usage: test_gpu_check_on_host.sh REPO_ROOT WORK_DIR KCNN_BENCH
set -uo pipefail
root=$1 work=$2 bench=$3
rm -rf "$work"
mkdir -p "$work/bin" "$work/out"
# The reason first, then the check's output (a CI log may keep only the head of a failed test's).
fail() {
  echo "FAIL: $*"
  [ -f "$work/stdout" ] && grep -v 'selects no case of this build' "$work/stdout"
  exit 1
}

# The stand-in: runs the target, then writes an ncu --csv log with one kernel per case the target
# profiled (the keys of the rows it wrote under its --out), as Nsight Compute 2025.3 writes them
# with --nvtx --print-nvtx-rename kernel: the range in its own column, the kernel named
# "<range>/<kernel's own name>"; with --page raw (the warp-state step) one row per kernel, a column
# per metric, after a row of units.
cat >"$work/bin/ncu" <<'NCU'
#!/bin/sh
log='' clock='' page=details
while [ $# -gt 0 ]; do
  case "$1" in
    --log-file) log=$2; shift 2 ;;
    --clock-control) clock=$2; shift 2 ;;
    --page) page=$2; shift 2 ;;
    --metrics|--section|--profile-from-start|--print-nvtx-rename|--print-units) shift 2 ;;
    --nvtx|--csv) shift ;;
    *) break ;;
  esac
done
[ "$clock" = none ] || { echo "stand-in ncu: --clock-control none expected" >&2; exit 3; }
"$@"
rc=$?
dest=''
prev=''
for a in "$@"; do [ "$prev" = --out ] && dest=$a; prev=$a; done
keys=$(find "$dest" -name '*.csv' | while read -r f; do
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "key") k = i; next } { print $k }' "$f"
done)
if [ "$page" = raw ]; then
  {
    echo '"ID","Process ID","Process Name","Host Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg","Kernel Name","smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio","gpu__time_duration.sum"'
    echo '"","","","","","","","nsecond"'
    [ -n "$keys" ] && echo "$keys" | awk '{ printf "\"%d\",\"1\",\"kcnn-bench\",\"h\",\"1  \"\"<default domain>:%s:none:none:none:none:none:none\"\" \",\"%s/void kernel(T1)\",\"12.5\",\"2,000\"\n", NR, $0, $0 }'
  } >"$log"
  exit $rc
fi
{
  echo '"ID","Process ID","Process Name","Host Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg","Kernel Name","Metric Name","Metric Unit","Metric Value"'
  [ -n "$keys" ] && echo "$keys" | awk '{ r = sprintf("\"%d\",\"1\",\"kcnn-bench\",\"h\",\"1  \"\"<default domain>:%s:none:none:none:none:none:none\"\" \",\"%s/void kernel(T1)\"", NR, $0, $0)
               printf "%s,\"dram__bytes_read.sum\",\"byte\",\"4096\"\n", r
               printf "%s,\"gpu__time_duration.sum\",\"nsecond\",\"2,000\"\n", r
               printf "%s,\"launch__registers_per_thread\",\"register/thread\",\"32\"\n", r }'
} >"$log"
exit $rc
NCU
chmod +x "$work/bin/ncu"

# perf_memory at a host-sized shape (KCNN_SUITES_DIR is searched before suites/): at its DRAM size
# concat takes much of the short session on a host, so whether the later steps ran or were skipped
# for budget (and the check exited 1 or 0) followed the machine's load. Every other suite and list
# comes from suites/ as on the GPU.
mkdir -p "$work/suites"
cp "$root/suites/perf_memory_model.txt" "$work/suites/"
cat >"$work/suites/perf_memory.csv" <<'CSV'
#@ kind: layers
network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,repeat,rounding,params
perf,concat,concat,2,64,14,14,,,,,,,1,,parts=16+16+24+8
CSV
export KCNN_SUITES_DIR=$work/suites

# A baseline's minutes must leave the session some.
(cd "$root" && OUT="$work/out" scripts/gpu-check --minutes 1.5 --bench "$bench" --baseline "$bench" \
  --baseline-minutes 1.5) >"$work/refused" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "--baseline-minutes equal to --minutes: exit $rc, expected 2"
grep -q 'baseline-minutes 1.5: must be a number of at least 1/60 under --minutes' "$work/refused" || fail "no reason given: $(cat "$work/refused")"
# Nor may they be too short to bound the old binary (timeout 0 would never stop it).
(cd "$root" && OUT="$work/out" scripts/gpu-check --minutes 1.5 --bench "$bench" --baseline "$bench" \
  --baseline-minutes 0.01) >"$work/refused" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "--baseline-minutes 0.01: exit $rc, expected 2"

# A binary named but absent, with no PATH.gz beside it either, is refused.
(cd "$root" && OUT="$work/out" scripts/gpu-check --minutes 1.5 --bench "$bench" --baseline "$work/old/kcnn-bench") \
  >"$work/refused" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "an absent baseline: exit $rc, expected 2"
grep -q "old/kcnn-bench: no executable there, nor .*old/kcnn-bench.gz" "$work/refused" || fail "no reason given: $(cat "$work/refused")"

# Only concat in nchw: the smoke and ncu steps are short on a host, the other suites have no concat
# and fail at once (exit 2), so the check exits 1 and says so. The same binary stands in for an
# older one, carried gzip-compressed as a CUDA build's must be (the check unpacks it beside the
# .gz): its memory-bound forms of smoke and perf_memory go to baseline/ (smoke's small concat must
# be there, validated).
mkdir -p "$work/old" && gzip -1 -c "$bench" >"$work/old/kcnn-bench.gz"
start=$(date +%s)
(cd "$root" && PATH="$work/bin:$PATH" OUT="$work/out" scripts/gpu-check --minutes 1.5 --bench "$bench" \
  --baseline "$work/old/kcnn-bench" --baseline-minutes 0.4 -- --quick --no-ceilings --op concat --layout nchw) >"$work/stdout" 2>&1
rc=$?
seconds=$(($(date +%s) - start))
[ $rc -eq 1 ] || fail "exit $rc, expected 1 (the steps without concat fail)"
[ $seconds -le 150 ] || fail "$seconds s, over the 1.5-minute budget and the report after it"
archive=$work/out/gpu-check.tar.gz
[ -f "$archive" ] || fail "no archive at $archive"
tar -tzf "$archive" >"$work/listing" || fail "the archive does not list"
grep -q -- '-smoke\.csv$' "$work/listing" || fail "no smoke results in the archive"
grep -q -- '-session\.json$' "$work/listing" || fail "no session record in the archive"
grep -q -- '-ncu-metrics\.csv$' "$work/listing" || fail "no ncu log in the archive"
grep -q -- '-ncu-metrics-counters\.csv$' "$work/listing" || fail "no counters CSV in the archive"
grep -q -- '-ncu-warp-states\.csv$' "$work/listing" || fail "no warp-state log in the archive"
grep -q -- 'report/index\.html$' "$work/listing" || fail "no report in the archive"
grep -q -- 'gpu-check\.log$' "$work/listing" || fail "no log in the archive"
grep -q -- '^\./baseline/.*-smoke+perf_memory\.csv$' "$work/listing" || fail "no baseline smoke and perf_memory results in the archive"
grep -q "^gpu-check: baseline $work/old/kcnn-bench, " "$work/stdout" || fail "the baseline did not run unpacked beside its .gz"
! grep -q 'kcnn-bench$' "$work/listing" || fail "a binary in the archive: $(grep 'kcnn-bench$' "$work/listing")"
cmp -s "$bench" "$work/old/kcnn-bench" || fail "the unpacked baseline differs from the binary compressed"
mkdir -p "$work/x" && tar -xzf "$archive" -C "$work/x"
base=$(find "$work/x/baseline" -name '*-smoke+perf_memory.csv' | head -1)
grep ',concat/nchw/global/coalesced/vector/smoke\.concat3/n8,' "$base" | grep -q ',ok,' ||
  fail "the baseline lacks the smoke's concat, validated"
counters=$(find "$work/x" -name '*-ncu-metrics-counters.csv' | head -1)
grep -q '^concat/nchw/global/coalesced/vector/ncu\.concat/n32,' "$counters" || fail "the counters CSV lacks the profiled case"
# The warp-state list has no concat: its step profiled nothing, and the check said so and went on
# (scripts/ncu-warp-states' conversion has its own tests, tests/report/test_ncu_warp_states.py).
grep -q 'ncu-warp-states: .*-ncu-warp-states.csv: no kernel rows' "$work/stdout" || fail "the check did not convert the warp-state log"
md=$(find "$work/x" -path '*report/report.md' | grep -v ncu-profiled | head -1)
grep -q 'ncu_time_us\|No modelled case is in the counters\|No rows from a GPU-model build' "$md" || fail "the report did not read the counters"
grep 'session step .*: [a-z]' "$work/stdout" | grep -v ": /"
echo "gpu check on the host: exit $rc in $seconds s, archive of $(wc -l <"$work/listing") entries"
