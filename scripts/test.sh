#!/usr/bin/env bash
# The test command: install what is missing, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
ctest --test-dir "$BUILD_DIR" -j "$LUMINAL_JOBS" --output-on-failure
