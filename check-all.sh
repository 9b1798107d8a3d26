#!/usr/bin/env bash
# Build and test posixtrace twice, out of tree:
#   1. build/plain  ./configure                       && make check
#   2. build/asan   ./configure --enable-sanitizers   && make check
# Both passes run; the script exits non-zero if either failed.
# Environment: MAKE_JOBS (default 2), PYTEST_ARGS (extra pytest arguments).
set -euo pipefail

cd "$(dirname "$0")"
top=$(pwd)
jobs=${MAKE_JOBS:-2}

if [ -f config.status ]; then
    echo "check-all: the source tree itself is configured (config.status exists);" >&2
    echo "check-all: run 'make distclean' here first (out-of-tree builds need a clean tree)." >&2
    exit 2
fi

echo "=== check-all: autogen"
./autogen.sh

# run_pass NAME CONFIGURE-ARGS...: fresh build in build/NAME, then make check.
run_pass() {
    local name=$1; shift
    local dir="$top/build/$name"
    echo "=== check-all: pass '$name': configure $* && make -j$jobs check"
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && "$top/configure" "$@" && make -j"$jobs" && make -j"$jobs" check)
}

status=0
results=()
if run_pass plain; then
    results+=("PASS  plain build + make check")
else
    results+=("FAIL  plain build + make check (see above; build/plain)")
    status=1
fi
if run_pass asan --enable-sanitizers; then
    results+=("PASS  sanitizer build (--enable-sanitizers) + make check")
else
    results+=("FAIL  sanitizer build (--enable-sanitizers) + make check (see above; build/asan)")
    status=1
fi

echo "=== check-all: summary"
for r in "${results[@]}"; do echo "check-all: $r"; done
if [ "$status" -eq 0 ]; then
    echo "check-all: all passes succeeded"
else
    echo "check-all: FAILED" >&2
fi
exit "$status"
