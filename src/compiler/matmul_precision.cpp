#include "luminal/compiler/matmul_precision.hpp"

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

}  // namespace luminal::compiler
