#!/usr/bin/env bash
# The test command: install what is missing, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# Some C++ tests take their expected values from independent Python readers
# (gguf-py, safetensors): install them before ctest.
PYTHON=${PYTHON:-python3}
for mod in numpy gguf safetensors; do
  "$PYTHON" -c "import $mod" 2>/dev/null || "$PYTHON" -m pip install -q "$mod"
done
ctest --test-dir "$BUILD_DIR" -j "$LUMINAL_JOBS" --output-on-failure

# ---- Python package (python/; appended by the Python package engineer) -----------
# Installs the Python packages the build and tests need when missing, builds and
# installs the package (pip install .), runs the pytest suite, then regenerates
# docs/OPS.md from the op-coverage records the suite writes.
PYTHON=${PYTHON:-python3}
py_missing=()
for mod in numpy pytest nanobind scikit_build_core tokenizers gguf jinja2 safetensors transformers; do
  "$PYTHON" -c "import $mod" 2>/dev/null || py_missing+=("${mod//_/-}")
done
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "== installing Python packages: ${py_missing[*]}"
  "$PYTHON" -m pip install -q "${py_missing[@]}"
fi
if ! "$PYTHON" -c "import torch" 2>/dev/null; then
  echo "== installing torch (the reference the tests compare with)"
  "$PYTHON" -m pip install -q torch
fi
echo "== pip install . (build dir build-pip/, reused)"
CMAKE_BUILD_PARALLEL_LEVEL="$LUMINAL_JOBS" "$PYTHON" -m pip install -q --no-build-isolation .
export LUMINAL_REQUIRE_INSTALLED=1
export LUMINAL_OPS_COVERAGE="$PWD/$BUILD_DIR/ops_coverage.json"
rm -f "$LUMINAL_OPS_COVERAGE"
# From the repo root `import luminal` finds the installed package (python/luminal is
# not on sys.path: only python/tests is, for conftest).
"$PYTHON" -m pytest -q -p no:cacheprovider python/tests
"$PYTHON" tools/gen_ops_md.py --input "$LUMINAL_OPS_COVERAGE" --output docs/OPS.md
