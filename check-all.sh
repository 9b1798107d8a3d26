#!/usr/bin/env bash
# Build and test posixtrace twice, out of tree, and test in both clock modes:
#   1. build/plain  ./configure                       && make check
#   2. build/asan   ./configure --enable-sanitizers   && make check
#   3. build/plain  POSIXTRACE_CLOCK=realtime make check (the CLOCK_REALTIME
#      stamps of a machine without an invariant TSC; on such a machine passes
#      1 and 2 already run in that mode: doc/semantics.md "Timestamps")
# Every pass runs; the script exits non-zero if any failed.
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

# check_again NAME DIR ENV...: make check once more in an existing build.
check_again() {
    local name=$1 dir=$2; shift 2
    echo "=== check-all: pass '$name': $* make -j$jobs check in $dir"
    (cd "$dir" && env "$@" make -j"$jobs" check)
}

cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)
echo "=== check-all: kernel clocksource: $cs"
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

if [ -d "$top/build/plain/libtrace" ] && check_again realtime "$top/build/plain" POSIXTRACE_CLOCK=realtime; then
    results+=("PASS  plain build, POSIXTRACE_CLOCK=realtime make check")
else
    results+=("FAIL  plain build, POSIXTRACE_CLOCK=realtime make check (see above)")
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
