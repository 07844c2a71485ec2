#!/usr/bin/env bash
# How README command (a) and the CUDA configuration decide, with the machine stubbed: a fake
# nvidia-smi and a fake nvcc on PATH, or none.
#   scripts/first-run --dry-run: GPU and nvcc -> cuda; GPU without nvcc, nvidia-smi without a GPU,
#     no nvidia-smi -> host, each with its reason in the first line; the host commands are the old
#     command (a)'s; KCNN_FIRST_RUN forces or is refused.
#   cmake -DKCNN_CUDA=ON (configure only): the GPU's architecture from nvidia-smi or KCNN_CUDA_ARCH,
#     an unsuitable installed Kokkos (Debian's 3.4.1 where it is installed) passed over for the
#     fetch, or refused with KCNN_KOKKOS_FROM=installed; no GPU and no KCNN_CUDA_ARCH refused.
# Usage: test_gpu_detection.sh <source dir> <scratch dir> <cmake>
set -uo pipefail
src=$1
work=$2
cmake_exe=$3
rm -rf "$work" && mkdir -p "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Stubs. gpu/: nvidia-smi of an H100; nogpu/: nvidia-smi as on a node whose driver sees no GPU;
# a100/: nvidia-smi of an A100; nvcc/: a fake nvcc.
mkdir -p "$work/gpu" "$work/nogpu" "$work/a100" "$work/nvcc"
cat > "$work/gpu/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in *name,compute_cap*) echo "NVIDIA H100 80GB HBM3, 9.0" ;; *compute_cap*) echo "9.0" ;; esac
EOF
cat > "$work/a100/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in *name,compute_cap*) echo "NVIDIA A100-SXM4-80GB, 8.0" ;; *compute_cap*) echo "8.0" ;; esac
EOF
cat > "$work/nogpu/nvidia-smi" <<'EOF'
#!/bin/sh
echo "No devices were found"
exit 6
EOF
printf '#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.88"\n' > "$work/nvcc/nvcc"
chmod +x "$work"/*/nvidia-smi "$work/nvcc/nvcc"
base=/usr/bin:/bin
no_cuda_home=$work/no-cuda-home

first_line() {  # PATH, then env assignments; prints the script's first line
  local path=$1
  shift
  env -i HOME="$HOME" PATH="$path" CUDA_HOME="$no_cuda_home" "$@" bash "$src/scripts/first-run" --dry-run 2>&1 | head -n 1
}
expect_line() {  # what, pattern, line
  if [[ ! "$3" =~ $2 ]]; then fail "$1: expected /$2/, got: $3"; else echo "ok: $1: $3"; fi
}

if [[ -x /usr/bin/nvcc || -x /bin/nvcc ]]; then
  echo "note: nvcc in /usr/bin or /bin: the no-nvcc cases cannot be stubbed here, skipped"
  have_system_nvcc=1
else
  have_system_nvcc=0
fi
if [[ -x /usr/bin/nvidia-smi || -x /bin/nvidia-smi ]]; then
  echo "note: nvidia-smi in /usr/bin or /bin: the no-nvidia-smi cases cannot be stubbed here, skipped"
  have_system_smi=1
else
  have_system_smi=0
fi

expect_line "GPU and nvcc" '^first-run: cuda configuration: nvidia-smi lists a GPU \(NVIDIA H100 80GB HBM3, 9\.0\) and nvcc is installed' \
  "$(first_line "$work/gpu:$work/nvcc:$base")"
if [[ $have_system_nvcc == 0 ]]; then
  expect_line "GPU without nvcc" '^first-run: host configuration: nvidia-smi lists a GPU .* but there is no nvcc' \
    "$(first_line "$work/gpu:$base")"
  mkdir -p "$no_cuda_home/bin" && cp "$work/nvcc/nvcc" "$no_cuda_home/bin/nvcc"
  expect_line "GPU and nvcc in CUDA_HOME" '^first-run: cuda configuration: .* nvcc is installed \('"$no_cuda_home"'/bin/nvcc\)' \
    "$(first_line "$work/gpu:$base")"
  rm -rf "$no_cuda_home"
fi
expect_line "nvidia-smi without a GPU" '^first-run: host configuration: nvidia-smi lists no GPU$' \
  "$(first_line "$work/nogpu:$work/nvcc:$base")"
if [[ $have_system_smi == 0 ]]; then
  expect_line "no nvidia-smi" '^first-run: host configuration: no NVIDIA GPU \(no nvidia-smi\)$' \
    "$(first_line "$work/nvcc:$base")"
fi
expect_line "forced host" '^first-run: host configuration: KCNN_FIRST_RUN=host$' \
  "$(first_line "$work/gpu:$work/nvcc:$base" KCNN_FIRST_RUN=host)"
out=$(env -i HOME="$HOME" PATH="$work/gpu:$base" KCNN_FIRST_RUN=gpu bash "$src/scripts/first-run" --dry-run 2>&1)
rc=$?
[[ $rc == 2 && "$out" == *"KCNN_FIRST_RUN=gpu: expected host or cuda"* ]] || fail "KCNN_FIRST_RUN=gpu: exit $rc: $out"

# The host path is the old command (a), command for command.
host_cmds=$(env -i HOME="$HOME" PATH="$work/nogpu:$base" bash "$src/scripts/first-run" --dry-run 2>&1 |
            sed -n 's/^first-run: \(cmake\|build\/\)/\1/p')
jobs=$(nproc)
want="cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j$jobs
build/benchmarks/kcnn-bench --out build/first-run
build/reports/kcnn-report build/first-run -o build/first-run/report"
[[ "$host_cmds" == "$want" ]] || fail "host commands: got
$host_cmds
expected
$want"
# The GPU path: the cuda preset, then the whole session under its budget.
gpu_cmds=$(env -i HOME="$HOME" PATH="$work/gpu:$work/nvcc:$base" KCNN_SESSION_MINUTES=25 bash "$src/scripts/first-run" --dry-run 2>&1 |
           sed -n 's/^first-run: \(cmake\|build-cuda\/\)/\1/p')
want="cmake --preset cuda
cmake --build --preset cuda -j$jobs
build-cuda/benchmarks/kcnn-bench --session first-gpu --session-minutes 25 --out results"
[[ "$gpu_cmds" == "$want" ]] || fail "cuda commands: got
$gpu_cmds
expected
$want"

# The CUDA configuration's own detection (configure only; nothing is fetched or built).
configure() {  # name, PATH, cmake args...; prints configure's output
  local name=$1 path=$2
  shift 2
  env PATH="$path" "$cmake_exe" -S "$src" -B "$work/cfg-$name" -DKCNN_CUDA=ON -DKCNN_BUILD_TESTS=OFF \
    -DKCNN_BUILD_BENCHMARKS=OFF "$@" 2>&1
}
expect_output() {  # what, pattern, output (CMake wraps its messages: matched on one joined line)
  if tr '\n' ' ' <<<"$3" | sed 's/  */ /g' | grep -Eq -- "$2"; then echo "ok: $1"; else fail "$1: no line matches /$2/ in:
$(tail -n 25 <<<"$3")"; fi
}
out=$(configure arch-a100 "$work/a100:$base" -DKCNN_KOKKOS_FROM=fetch -DFETCHCONTENT_SOURCE_DIR_KOKKOS="$work/none")
expect_output "architecture from nvidia-smi" 'kcnn: CUDA configuration: GPU AMPERE80 \(nvidia-smi: compute capability 8\.0\)' "$out"
out=$(configure arch-given "$work/a100:$base" -DKCNN_CUDA_ARCH=9.0 -DKCNN_KOKKOS_FROM=fetch -DFETCHCONTENT_SOURCE_DIR_KOKKOS="$work/none")
expect_output "KCNN_CUDA_ARCH over nvidia-smi" 'kcnn: CUDA configuration: GPU HOPPER90 \(KCNN_CUDA_ARCH=9\.0\)' "$out"
out=$(configure arch-bad "$work/a100:$base" -DKCNN_CUDA_ARCH=91)
expect_output "unknown KCNN_CUDA_ARCH refused" 'KCNN_CUDA_ARCH=91 is neither a compute capability' "$out"
out=$(configure no-gpu "$work/nogpu:$base")
expect_output "no GPU and no KCNN_CUDA_ARCH refused" 'needs the GPU.s architecture: nvidia-smi found no GPU' "$out"
# An installed Kokkos: Debian's 3.4.1 where it is installed (CI), none elsewhere; either way not
# one the CUDA configuration takes.
out=$(configure installed "$work/gpu:$base" -DKCNN_KOKKOS_FROM=installed)
expect_output "KCNN_KOKKOS_FROM=installed refuses an unsuitable Kokkos" \
  'KCNN_KOKKOS_FROM=installed, but (Kokkos [0-9.]+ at .* is not in \[4\.7\.03, 5\)|find_package\(Kokkos\) found none|Kokkos at .* has no CUDA backend)' "$out"
out=$(configure auto "$work/gpu:$work/nvcc:$base" -DFETCHCONTENT_SOURCE_DIR_KOKKOS="$work/none")
expect_output "auto passes an unsuitable Kokkos over for the fetch" \
  'kcnn: no suitable installed Kokkos \(.*\): fetching Kokkos 4\.7\.03 and Kokkos Kernels 4\.7\.03' "$out"
if [[ $have_system_nvcc == 0 ]]; then
  out=$(env -u CUDA_ROOT PATH="$work/gpu:$base" "$cmake_exe" -S "$src" -B "$work/cfg-no-nvcc" -DKCNN_CUDA=ON \
        -DKCNN_BUILD_TESTS=OFF -DKCNN_BUILD_BENCHMARKS=OFF -DKCNN_KOKKOS_FROM=fetch 2>&1)
  expect_output "a fetch without nvcc on PATH refused" 'nvcc_wrapper, which runs nvcc from PATH: nvcc is not on PATH' "$out"
fi

rm -rf "$work"
if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
