#pragma once
// The error every weight-file reader throws for a malformed or unsupported
// file. Messages start with the file name and the format ("model.gguf: GGUF:
// tensor 'blk.0.attn_q.weight' data [96, 4192) is outside the file (4000
// bytes)") so a user can tell which file is broken and how.

#include <string>

#include "luminal/error.hpp"

namespace luminal {

class FormatError : public Error {
public:
  using Error::Error;
};

}  // namespace luminal
