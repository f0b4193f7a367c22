#pragma once
// The whole public C++ API of luminal.

#include "luminal/core/dtype.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/op.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"
#include "luminal/shape/expr.hpp"
#include "luminal/shape/view.hpp"
