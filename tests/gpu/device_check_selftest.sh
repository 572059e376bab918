#!/usr/bin/env bash
# Self-test of scripts/device-check run, without a GPU: a bundle of fake binaries
# (tests/gpu/device_check_fakes: collbench, nccl-tests, the kernel benchmark, the GPU tests) and
# fake mpirun, nvidia-smi, ldd and ldconfig in front of PATH. Three runs:
#   good   every check passes; the comparison table shows the medians, spreads and ratios worked
#          out by hand below; the bundle's libraries reach collbench's programs and never mpirun
#          or nccl-tests; one-rank programs start under mpirun -np 1; emulated nodes carry
#          NCCL_HOSTID (and NCCL_TESTS_DEVICE=0 for nccl-tests); nccl-tests gets the toolkit's
#          libcudart and collbench's NCCL
#   bad    exactly the checks the canned numbers miss fail
#   nogpu  the run stops at once, still printing its summary and leaving its three files
# Ends with "N passed, N failed"; exit 0 when every assertion held.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CHECK=$HERE/../../scripts/device-check
ROOT=$(mktemp -d "${TMPDIR:-/tmp}/device-check-selftest.XXXXXX") || exit 1
trap '[ -n "${KEEP_SELFTEST:-}" ] || rm -rf "$ROOT"' EXIT
PASSED=0
FAILED=0

pass() { PASSED=$((PASSED + 1)); }
fail() { FAILED=$((FAILED + 1)); echo "FAILED: $*"; }

expect_line() {  # expect_line WHAT FILE REGEX: a line of FILE matches the extended REGEX
  if grep -Eq -- "$3" "$2"; then pass; else fail "$1: no line of $(basename "$2") matches: $3"; fi
}

expect_no_line() {  # expect_no_line WHAT FILE REGEX
  local hit
  if hit=$(grep -E -m1 -- "$3" "$2"); then fail "$1: $(basename "$2") has: $hit"; else pass; fi
}

every_line() {  # every_line WHAT FILE SELECT REGEX: FILE has lines matching SELECT, and all match REGEX
  local lines odd
  lines=$(grep -E -- "$3" "$2")
  odd=$(grep -Ev -- "$4" <<<"$lines" | head -1)
  if [ -n "$lines" ] && [ -z "$odd" ]; then pass; else fail "$1: ${odd:-no line matches $3}"; fi
}

# The fake bundle: stage's layout, one library only collbench's programs need, and the CUDA
# toolkit and system NCCL directories the fake ldd and ldconfig point at.
make_bundle() {
  local bundle=$ROOT/bundle
  mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/nccl-tests" "$ROOT/cuda/bin" "$ROOT/cuda/lib64" "$ROOT/system-nccl"
  cp "$HERE/device_check_fakes/collbench" "$HERE/device_check_fakes/collbench-kernels-bench" \
     "$HERE/device_check_fakes/collbench_gpu_tests" "$bundle/bin/"
  cp "$HERE/device_check_fakes/all_reduce_perf_mpi" "$bundle/nccl-tests/"
  # The real reader: the check reads every result through it.
  cp "${COLLBENCH_REPORT:?the path of collbench-report (the build sets it)}" "$bundle/bin/collbench-report"
  : >"$bundle/lib/libfake-bundle.so.1"
  : >"$ROOT/cuda/lib64/libcudart.so.13"
  : >"$ROOT/system-nccl/libnccl.so.2"
  printf '#!/bin/sh\necho "fake nvcc: only its location matters" >&2\nexit 1\n' >"$ROOT/cuda/bin/nvcc"
  chmod +x "$bundle"/bin/* "$bundle/nccl-tests/all_reduce_perf_mpi" "$ROOT/cuda/bin/nvcc"
}

# run_check SCENARIO: the check's run on the fake bundle; its output in ROOT/SCENARIO.out, its
# files in ROOT/SCENARIO/, the fakes' log in ROOT/SCENARIO.calls; sets STATUS and ELAPSED.
run_check() {
  local scenario=$1 began=$SECONDS
  rm -f "$ROOT"/round-* "$ROOT"/fault-reported-*
  mkdir -p "$ROOT/$scenario" "$ROOT/$scenario.cwd"
  : >"$ROOT/$scenario.calls"
  # From an empty directory, which must stay empty: everything goes to $OUT and the work directory.
  (cd "$ROOT/$scenario.cwd" && env -u LD_LIBRARY_PATH PATH="$HERE/device_check_fakes:$ROOT/cuda/bin:$PATH" FAKE_SCENARIO="$scenario" \
    FAKE_ROOT="$ROOT" FAKE_LOG="$ROOT/$scenario.calls" OUT="$ROOT/$scenario" DEVICE_CHECK_BUDGET=300 \
    TMPDIR="$ROOT" bash "$CHECK" run "$ROOT/bundle" >"$ROOT/$scenario.out" 2>&1)
  STATUS=$?
  ELAPSED=$((SECONDS - began))
  local stray
  stray=$(ls -A "$ROOT/$scenario.cwd")
  if [ -z "$stray" ]; then pass; else fail "$scenario: the run left files in its directory: $stray"; fi
}

expect_three_files() {  # expect_three_files SCENARIO
  local file
  for file in summary.txt failures.txt device-check-logs.tar.gz; do
    if [ -f "$ROOT/$1/$file" ]; then pass; else fail "$1: \$OUT/$file is missing"; fi
  done
  if [ "$(find "$ROOT/$1" -type f | wc -l)" -eq 3 ]; then pass; else fail "$1: \$OUT has more than three files"; fi
}

check_good() {
  run_check good
  local out=$ROOT/good.out calls=$ROOT/good.calls summary=$ROOT/good/summary.txt
  if [ "$STATUS" -eq 0 ]; then pass; else fail "good: exit $STATUS, expected 0 (see the FAIL rows below)"; grep -E '^FAIL' "$summary"; fi
  expect_three_files good
  expect_line "good: summary" "$summary" '^== 0 failed'
  # The table, printed last: the medians over the rounds, the spreads and the ratios.
  #   8 B:   collbench 5.0 5.2 4.9 us -> 5.00, spread 0.3/5.0 = 6.0%; nccl-tests 4.8 4.7 4.9 -> 4.80,
  #          4.2%; ratio 5.00/4.80 = 1.042
  #   1 GiB: collbench 512 510 515 us -> 512.00, algbw 1073741824/512 us = 2097.15 GB/s, spread
  #          5/512 = 1.0%; nccl-tests 507 508 506 -> 507.00, 2117.83 GB/s, 0.4%; ratio 1.010
  #   -G 10: collbench 1.1 1.0 1.2 -> 1.10, 18.2%; nccl-tests 1.0 0.95 1.05 -> 1.00, 10.0%
  expect_line "good: table 8 B" "$out" '^1rank +8 B \| +5\.00 +0\.00 +0\.00 +6\.0% of 3 \| +4\.80 +0\.00 +0\.00 +4\.2% of 3 \| 1\.042$'
  expect_line "good: table 1 GiB" "$out" '^1rank +1 GiB \| +512\.00 +2097\.15 +0\.00 +1\.0% of 3 \| +507\.00 +2117\.83 +0\.00 +0\.4% of 3 \| 1\.010$'
  expect_line "good: table -G" "$out" '^1rank-G10 +8 B \| +1\.10 +0\.01 +0\.00 +18\.2% of 3 \| +1\.00 +0\.01 +0\.00 +10\.0% of 3 \| 1\.100$'
  # 2 emulated nodes at 1 KiB: collbench 4400 + 1024/1800 us, nccl-tests 4300 + 1024/1860 us, busbw = algbw.
  expect_line "good: table 2 nodes" "$out" '^2nodes +1 KiB \| +4400\.57 +0\.00 +0\.00 +0\.0% of 3 \| +4300\.55 +0\.00 +0\.00 +0\.0% of 3 \| 1\.023$'
  if [ "$(tail -n 1 "$out" | cut -d' ' -f1)" = 2nodes ]; then pass; else fail "good: the table is not printed last"; fi
  expect_line "good: 1 GiB algbw" "$summary" '^PASS +1 rank: all_reduce 1 GiB out-of-place algbw >= 2000 GB/s +2097\.15 GB/s, median of 3 \(spread 1\.0%\)$'
  expect_line "good: 1 GiB ratio" "$summary" '^PASS +1 rank: 1 GiB algbw within 2% of nccl-tests +collbench 2097\.15 vs nccl-tests 2117\.83 GB/s: ratio 0\.9902'
  expect_line "good: 8 B time" "$summary" '^PASS +1 rank: all_reduce 8 B time <= 8 us +5\.00 us, median of 3 \(spread 6\.0%\)$'
  expect_line "good: 8 B ratio" "$summary" '^PASS +1 rank: 8 B time within 10% of nccl-tests +collbench 5\.00 vs nccl-tests 4\.80 us: ratio 1\.0417'
  expect_line "good: graphs" "$summary" '^PASS +1 rank: CUDA graphs \(-G 10\) lower the 8 B time +1\.10 us with graphs vs 5\.00 us'
  expect_line "good: same NCCL" "$summary" "^PASS +nccl-tests and collbench load the same libnccl.so.2 +$ROOT/system-nccl/libnccl.so.2"
  expect_line "good: NCCL versions" "$summary" '^PASS +same NCCL at run time.*collbench 2\.28\.3, nccl-tests 22803'
  expect_line "good: cudart" "$summary" "^PASS +nccl-tests: libcudart.so.13 of the machine's CUDA +$ROOT/cuda/lib64"
  expect_line "good: algorithms" "$summary" '^PASS +2 emulated nodes: --algorithms 1 records NCCL.s choice per row +([0-9]+) of \1 rows; RING ; from NCCL.s profiler interface'
  expect_line "good: network" "$summary" '^PASS +4 emulated nodes: NCCL.s network is Socket +network net: "Socket"'
  expect_line "good: algorithm sources" "$summary" '^PASS +2 emulated nodes: the profiler and NCCL.s TUNING log name the same choices +[0-9]+ rows alike$'
  expect_line "good: TUNING log run" "$calls" '^collbench rank=0/2 .*NCCL_PROFILER_PLUGIN=none .*--algorithms 1'
  expect_line "good: doctor" "$summary" '^PASS +collbench doctor: the GPUs through NVML +exit 0; 1 GPU\(s\) from NVML'
  expect_line "good: stopped rank" "$summary" \
    '^PASS +4 emulated nodes: a stopped rank ends the job, named by NCCL.s RAS \(--timeout 2\) +exit 3; 4 rows verified before it; NCCL RAS: rank 2 \(pid 4242'
  expect_line "good: stopped rank's end" "$summary" \
    '^PASS +4 emulated nodes: every rank ends within 7 s of the stop +[0-6]\.[0-9] s after the stop of rank 2 \(pid [0-9]+; timeouts \+[0-9.]+ s, RAS \+[0-9.]+ s\)$'
  expect_line "good: reductions" "$summary" '^PASS +2 emulated nodes: NCCL.s reductions, \{half,bfloat16,fp8_e4m3,fp8_e5m2\} x every op'
  # Library paths: the bundle's reach collbench's programs only; mpirun runs in the check's own
  # environment, which had none.
  expect_no_line "good: mpirun saw a library path" "$calls" '^mpirun .*LD_LIBRARY_PATH=[^<]'
  every_line "good: collbench with the bundle's libraries" "$calls" '^collbench ' " LD_LIBRARY_PATH=$ROOT/bundle/lib "
  expect_no_line "good: nccl-tests with the bundle's libraries" "$calls" "^nccl-tests .*LD_LIBRARY_PATH=[^ ]*bundle/lib"
  expect_line "good: nccl-tests with the toolkit's libcudart and collbench's NCCL" "$calls" \
    "^nccl-tests .*LD_LIBRARY_PATH=$ROOT/system-nccl:$ROOT/cuda/lib64 "
  expect_line "good: the GPU tests with the bundle's libraries" "$calls" "^collbench_gpu_tests LD_LIBRARY_PATH=$ROOT/bundle/lib "
  # No MPI singleton: every collbench and nccl-tests process is a rank of an mpirun.
  expect_no_line "good: a singleton" "$calls" '^(collbench|nccl-tests) rank=<none>'
  expect_line "good: one rank through mpirun -np 1" "$calls" '^mpirun np=1 LD_LIBRARY_PATH=<unset> sh .*launch\.sh collbench '
  expect_line "good: emulated nodes" "$calls" '^collbench rank=1/4 NCCL_HOSTID=collbench-emulated-1 '
  expect_line "good: emulated nccl-tests" "$calls" '^nccl-tests rank=1/2 NCCL_HOSTID=collbench-emulated-1 NCCL_TESTS_DEVICE=0 '
  expect_line "good: the GPU tests' own emulated nodes" "$calls" '^collbench rank=1/2 NCCL_HOSTID=collbench-emulated-1 .*--device 0 all_reduce -b 1K'
  # Interleaved rounds, same arguments for both tools.
  expect_line "good: rounds" "$calls" '^nccl-tests rank=0/1 .* -b 8 -e 1G -f 8 -n 1000 -w 100 -d float -o sum -a 1 -c 1 -T 30 -J .*/cmp_1rank_round1_nccl-tests\.json$'
  if [ "$(grep -Ec '^(collbench|nccl-tests) rank=0/1 .*-b 8 -e 1G -f 8 ' "$calls")" -eq 6 ] &&
     grep -E '^(collbench|nccl-tests) rank=0/1 .*-b 8 -e 1G -f 8 ' "$calls" | cut -d' ' -f1 | paste -sd' ' |
       grep -qx 'collbench nccl-tests nccl-tests collbench collbench nccl-tests'; then
    pass
  else
    fail "good: the one-rank rounds are not collbench, nccl-tests interleaved (ABBA)"
  fi
  # Everything comes back in the tarball: logs, JSONL, the exact commands, the table.
  local listing
  listing=$(tar -tzf "$ROOT/good/device-check-logs.tar.gz")
  local member
  for member in logs/commands.txt logs/comparison.txt logs/launch.sh results/reports/comparison_1rank/points.csv \
                results/cmp_1rank_round1_collbench.jsonl results/one_rank_sweep.jsonl \
                results/reports/one_rank_sweep.jsonl/results.csv; do
    if grep -qx "$member" <<<"$listing"; then pass; else fail "good: the tarball lacks $member"; fi
  done
  tar -xzf "$ROOT/good/device-check-logs.tar.gz" -C "$ROOT/good" logs/commands.txt
  expect_line "good: commands" "$ROOT/good/logs/commands.txt" '^\$ sh .*/launch\.sh nccl-tests .*/all_reduce_perf_mpi -b 8 -e 1G'
}

check_bad() {
  run_check bad
  local summary=$ROOT/bad/summary.txt
  if [ "$STATUS" -eq 1 ]; then pass; else fail "bad: exit $STATUS, expected 1"; fi
  expect_three_files bad
  local expected=(
    '1 rank: all_reduce 1 GiB out-of-place algbw >= 2000 GB/s +1917\.40 GB/s'
    '1 rank: 1 GiB algbw within 2% of nccl-tests +collbench 1917\.40 vs nccl-tests 2117\.83 GB/s: ratio 0\.9054'
    '1 rank: all_reduce 8 B time <= 8 us +9\.00 us'
    '1 rank: 8 B time within 10% of nccl-tests +collbench 9\.00 vs nccl-tests 4\.80 us: ratio 1\.8750'
    '1 rank: CUDA graphs \(-G 10\) lower the 8 B time +9\.50 us with graphs vs 9\.00 us'
    'kernels: verify/float at 1 GiB .* 2160 GB/s = 0\.45 of peak'
    '2 emulated nodes: NCCL.s reductions'
    '--require-net IB on 2 emulated nodes exits 3 +exit 0'
    '2 emulated nodes: --algorithms 1 records NCCL.s choice per row +0 of [0-9]+ rows; none'
    '2 emulated nodes: the profiler and NCCL.s TUNING log name the same choices'
    'gpu tests: the binary .* 2 passed, 1 skipped'
    '4 emulated nodes: a stopped rank ends the job, named by NCCL.s RAS \(--timeout 2\) +exit 3; 4 rows verified before it; no NCCL RAS line$'
  )
  local row
  for row in "${expected[@]}"; do expect_line "bad" "$summary" "^FAIL +$row"; done
  if [ "$(grep -c '^FAIL' "$summary")" -eq ${#expected[@]} ]; then
    pass
  else
    fail "bad: $(grep -c '^FAIL' "$summary") FAIL rows, expected ${#expected[@]}:"
    grep '^FAIL' "$summary"
  fi
  expect_line "bad: failures.txt" "$ROOT/bad/failures.txt" '^=== FAIL 2 emulated nodes: NCCL.s reductions'
}

check_nogpu() {
  run_check nogpu
  local summary=$ROOT/nogpu/summary.txt
  if [ "$STATUS" -eq 1 ]; then pass; else fail "nogpu: exit $STATUS, expected 1"; fi
  if [ "$ELAPSED" -le 10 ]; then pass; else fail "nogpu: took $ELAPSED s, expected a fast failure"; fi
  expect_three_files nogpu
  expect_line "nogpu" "$summary" '^FAIL +a GPU is visible \(nvidia-smi -L\) +none: NVIDIA-SMI has failed'
  expect_line "nogpu" "$summary" '^\(no comparison ran\)$'
  expect_line "nogpu: summary printed" "$ROOT/nogpu.out" '^== 1 failed'
  if [ "$(tail -n 1 "$ROOT/nogpu.out")" = "(no comparison ran)" ]; then pass; else fail "nogpu: the table is not last"; fi
  expect_no_line "nogpu: a program ran" "$ROOT/nogpu.calls" '.'
}

make_bundle
check_good
check_bad
check_nogpu
if [ "$FAILED" -gt 0 ]; then
  echo "--- output of the good run"
  cat "$ROOT/good.out"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
