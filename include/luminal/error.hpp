#pragma once
// Errors raised by luminal. Every problem caused by user input (bad shapes,
// dtypes, axes, missing inputs, out-of-range indexes...) is reported by
// throwing one of these; luminal never aborts or asserts on user input.

#include <stdexcept>
#include <string>

namespace luminal {

/// Base class of every exception luminal throws.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A shape, rank or axis does not fit the operation (maps to Python ValueError).
class ShapeError : public Error {
public:
  using Error::Error;
};

/// A dtype is not accepted by the operation (maps to Python TypeError).
class DTypeError : public Error {
public:
  using Error::Error;
};

/// An index read at run time is outside its tensor (Gather out of range...).
class IndexError : public Error {
public:
  using Error::Error;
};

/// A named input, output or dimension is missing or unknown (maps to KeyError / ValueError).
class LookupError : public Error {
public:
  using Error::Error;
};

}  // namespace luminal
