#pragma once
// The HLIR primitive ops (SPEC section 2). Everything else is composed of these.

#include <string_view>

namespace luminal {

enum class OpKind : uint8_t {
  Input,     // a tensor supplied by the caller
  Output,    // marks its operand as a named result
  Constant,  // a scalar
  Iota,      // int tensor of n elements, element i = expr(index_var = i)
  Cast,      // element-wise conversion to the node's dtype
  Exp2,      // unary, float only
  Log2,
  Sin,
  Sqrt,
  Recip,
  Add,        // binary, same dtype (ints wrap; bool: logical or)
  Mul,        //                    (ints wrap; bool: logical and)
  Mod,        // remainder with the sign of the dividend (fmod / C %)
  LessThan,   // -> bool
  Gather,     // out[k] = data[indexes[k]]   (operands: indexes, data)
  Scatter,    // copy of dest with out[indexes[k]] = src[k]  (dest, indexes, src)
  SumReduce,  // reduce one axis
  MaxReduce,
};

std::string_view op_name(OpKind kind);
inline bool is_unary(OpKind k) {
  return k >= OpKind::Exp2 && k <= OpKind::Recip;
}
inline bool is_binary(OpKind k) {
  return k >= OpKind::Add && k <= OpKind::LessThan;
}
inline bool is_reduce(OpKind k) {
  return k == OpKind::SumReduce || k == OpKind::MaxReduce;
}
/// Number of operands the op takes.
int op_arity(OpKind kind);

}  // namespace luminal
