#include "luminal/compiler/matmul_precision.hpp"

#include <cstdlib>

#include "luminal/error.hpp"

namespace luminal::compiler {

std::string_view to_string(MatmulPrecision precision) {
  return precision == MatmulPrecision::Highest ? "highest" : "high";
}

MatmulPrecision parse_matmul_precision(std::string_view text) {
  if (text == "highest") return MatmulPrecision::Highest;
  if (text == "high") return MatmulPrecision::High;
  throw Error("unknown matmul precision \"" + std::string(text) +
              "\" (expected \"highest\" or \"high\")");
}

MatmulPrecision default_matmul_precision() {
  const char* env = std::getenv("LUMINAL_MATMUL_PRECISION");
  if (env == nullptr || *env == '\0') return MatmulPrecision::High;
  try {
    return parse_matmul_precision(env);
  } catch (const Error& e) {
    throw Error(std::string("LUMINAL_MATMUL_PRECISION: ") + e.what());
  }
}

}  // namespace luminal::compiler
