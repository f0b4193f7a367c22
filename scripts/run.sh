#!/usr/bin/env bash
# The main job. Until the model work lands (issue: real models), this builds
# luminal and runs the quick-start graph on the reference interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
"$BUILD_DIR"/luminal-demo "$@"
