#!/usr/bin/env bash
# benchmarks/cmake/kcnn_build_info.cmake on a scratch git repository: the header names the commit
# and tree state at each run (a commit made after the first build is seen by the next one, a
# modified tracked file makes it unclean, an untracked one does not), it is not rewritten when
# nothing changed (no needless recompilation), and where the source is not the top of a checkout
# the configure-time fallback is used. Usage: test_build_info.sh <kcnn source dir> <scratch dir> <cmake>
set -euo pipefail
src=$1 work=$2 cmake=$3
script=$src/benchmarks/cmake/kcnn_build_info.cmake
git=$(command -v git) || { echo "FAIL: git not found"; exit 1; }
# The scratch repository owes nothing to the caller's git: no global or system configuration (hooks,
# templates), no repository named by the environment.
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_CEILING_DIRECTORIES
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
rm -rf "$work" && mkdir -p "$work/repo"
out=$work/kcnn_build_info.hpp
gen() { "$cmake" -DSOURCE_DIR="$1" -DOUTPUT="$out" -DGIT_EXECUTABLE="$git" "-DFALLBACK_COMMIT=${2:-}" \
          "-DFALLBACK_CLEAN=${3:-}" -P "$script"; }
expect() {  # expect <commit> <clean>
  grep -qx "#define KCNN_BUILD_GIT_COMMIT \"$1\"" "$out" || { echo "FAIL: commit: wanted $1, got:"; cat "$out"; exit 1; }
  grep -qx "#define KCNN_BUILD_GIT_CLEAN \"$2\"" "$out" || { echo "FAIL: clean: wanted $2, got:"; cat "$out"; exit 1; }
}
cd "$work/repo"
g() { "$git" -c user.name=t -c user.email=t@t -c commit.gpgsign=false -c core.hooksPath=/dev/null "$@"; }
g init -q . && echo a > f && g add f && g commit -q -m one
one=$(g rev-parse HEAD)
gen "$work/repo"; expect "$one" 1
touch -d @0 "$out"  # an mtime no write can give it
gen "$work/repo"; expect "$one" 1
[[ $(stat -c %Y "$out") == 0 ]] || { echo "FAIL: rewritten though nothing changed"; exit 1; }
echo b > f; gen "$work/repo"; expect "$one" 0
g commit -q -am two; two=$(g rev-parse HEAD)
gen "$work/repo"; expect "$two" 1
echo u > untracked; gen "$work/repo"; expect "$two" 1
# A copy of the sources that is not a checkout of its own, here inside the scratch repository:
# the enclosing repository's commit is not this source's.
mkdir -p "$work/repo/tarball"
gen "$work/repo/tarball" 0123abc 1; expect 0123abc 1
gen "$work/repo/tarball"; expect "" ""
echo "build info: ok"
