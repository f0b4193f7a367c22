#pragma once
// Declarations of the generated tables (unicode_tables.cpp, made by
// gen_unicode_tables.py). Private to src/tokenizer.

#include <cstddef>
#include <cstdint>

#include "luminal/tokenizer/unicode.hpp"

namespace luminal::tokenizer::unicode::tables {

struct ClassRange {
  char32_t first, last;  // inclusive
  CharClass cls;
};
struct CccRange {
  char32_t first, last;
  uint8_t ccc;
};
/// cp maps to data[offset, offset + length).
struct Mapping {
  char32_t cp;
  uint32_t offset;
  uint32_t length;
};

extern const char* const kUnicodeVersion;
extern const ClassRange kClassRanges[];  // sorted, disjoint
extern const std::size_t kClassRangesSize;
extern const CccRange kCccRanges[];
extern const std::size_t kCccRangesSize;
extern const char32_t kDecompositionData[];
extern const Mapping kDecomposition[];  // sorted by cp
extern const std::size_t kDecompositionSize;
extern const char32_t kLowercaseData[];
extern const Mapping kLowercase[];
extern const std::size_t kLowercaseSize;

}  // namespace luminal::tokenizer::unicode::tables
