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
  // The maximum over one axis, a function of the values in axis order:
  //  * floats: NaN anywhere gives the canonical (positive, quiet) NaN; an empty
  //    axis gives -inf; otherwise the first element (in axis order) equal to the
  //    maximum -- equal values have equal bits except +0 / -0, so this decides
  //    only which zero a row whose maximum is 0 returns: the first zero's sign
  //    (max over [-0, +0] is -0, over [+0, -0] is +0). That is torch.maximum's
  //    rule (the first operand wins ties), which the frontend's element-wise
  //    max builds on (a MaxReduce over a stacked axis of 2).
  //  * integers and bool: the plain maximum (empty: the dtype's minimum / false).
  // Backends that reduce in parallel lanes must reproduce the zero choice
  // (the CPU backend rescans a row whose maximum is 0, see cpu/codegen.hpp).
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
