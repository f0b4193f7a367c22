#pragma once
// A small command-line parser for the `luminal` subcommands: long options
// with a value (`--max-tokens 8` or `--max-tokens=8`), flags (`--json`) and
// positional arguments; `--help` / `-h` anywhere asks for help; `--` ends
// the options. Bad usage throws UsageError with the message to print.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace luminal::cli {

class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::string name;        // without the leading "--"
  std::string value_name;  // "" for a flag
  std::string help;
  std::string default_text;  // shown in --help ("" = none)
};

struct CommandSpec {
  std::string name;
  std::string usage;    // after "luminal <name> "
  std::string summary;  // one paragraph
  std::vector<OptionSpec> options;
  std::string positional_help;  // "" when the command takes none
};

class ParsedArgs {
public:
  bool help = false;
  std::vector<std::string> positional;
  bool flag(const std::string& name) const { return flags_.count(name) != 0; }
  std::optional<std::string> value(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  /// The option as a number; UsageError naming the option when it is not one.
  double number_or(const std::string& name, double fallback) const;
  int64_t integer_or(const std::string& name, int64_t fallback) const;
  /// UsageError when the option is missing.
  std::string required(const std::string& name) const;

private:
  friend ParsedArgs parse_args(const CommandSpec& spec, const std::vector<std::string>& args);
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> flags_;
};

/// Parse the arguments after the subcommand name.
ParsedArgs parse_args(const CommandSpec& spec, const std::vector<std::string>& args);

/// The text `luminal <command> --help` prints.
std::string help_text(const CommandSpec& spec);

}  // namespace luminal::cli
