#!/usr/bin/env bash
# Install what posixtrace needs to build and test, from Debian 12's packages.
# Runs apt-get as root, or through sudo when not root.
set -euo pipefail
SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
    build-essential autoconf automake libtool pkg-config \
    libdw-dev libffi-dev libglib2.0-dev libxxhash-dev clang \
    python3 python3-pytest valgrind strace xz-utils
