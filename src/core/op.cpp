#include "luminal/core/op.hpp"

namespace luminal {

std::string_view op_name(OpKind kind) {
  switch (kind) {
    case OpKind::Input:
      return "Input";
    case OpKind::Output:
      return "Output";
    case OpKind::Constant:
      return "Constant";
    case OpKind::Iota:
      return "Iota";
    case OpKind::Cast:
      return "Cast";
    case OpKind::Exp2:
      return "Exp2";
    case OpKind::Log2:
      return "Log2";
    case OpKind::Sin:
      return "Sin";
    case OpKind::Sqrt:
      return "Sqrt";
    case OpKind::Recip:
      return "Recip";
    case OpKind::Add:
      return "Add";
    case OpKind::Mul:
      return "Mul";
    case OpKind::Mod:
      return "Mod";
    case OpKind::LessThan:
      return "LessThan";
    case OpKind::Gather:
      return "Gather";
    case OpKind::Scatter:
      return "Scatter";
    case OpKind::SumReduce:
      return "SumReduce";
    case OpKind::MaxReduce:
      return "MaxReduce";
  }
  return "?";
}

int op_arity(OpKind kind) {
  switch (kind) {
    case OpKind::Input:
    case OpKind::Constant:
    case OpKind::Iota:
      return 0;
    case OpKind::Gather:
      return 2;
    case OpKind::Scatter:
      return 3;
    default:
      return is_binary(kind) ? 2 : 1;
  }
}

}  // namespace luminal
