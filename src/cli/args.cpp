#include "args.hpp"

#include <cmath>
#include <sstream>

namespace luminal::cli {

namespace {

const OptionSpec* find_option(const CommandSpec& spec, const std::string& name) {
  for (const OptionSpec& o : spec.options)
    if (o.name == name) return &o;
  return nullptr;
}

}  // namespace

std::optional<std::string> ParsedArgs::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string ParsedArgs::value_or(const std::string& name, const std::string& fallback) const {
  return value(name).value_or(fallback);
}

double ParsedArgs::number_or(const std::string& name, double fallback) const {
  const auto v = value(name);
  if (!v) return fallback;
  try {
    size_t used = 0;
    const double d = std::stod(*v, &used);
    if (used == v->size() && std::isfinite(d)) return d;
  } catch (const std::exception&) {
  }
  throw UsageError("--" + name + ": expected a number, got '" + *v + "'");
}

int64_t ParsedArgs::integer_or(const std::string& name, int64_t fallback) const {
  const auto v = value(name);
  if (!v) return fallback;
  try {
    size_t used = 0;
    const long long i = std::stoll(*v, &used);
    if (used == v->size()) return i;
  } catch (const std::exception&) {
  }
  throw UsageError("--" + name + ": expected an integer, got '" + *v + "'");
}

std::string ParsedArgs::required(const std::string& name) const {
  const auto v = value(name);
  if (!v) throw UsageError("missing required option --" + name);
  return *v;
}

ParsedArgs parse_args(const CommandSpec& spec, const std::vector<std::string>& args) {
  ParsedArgs out;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a.size() < 2 || a[0] != '-' || a == "-") {
      out.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a == "-h" || a == "--help") {
      out.help = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) throw UsageError("unknown option '" + a + "'");
    std::string name = a.substr(2);
    std::optional<std::string> inline_value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const OptionSpec* o = find_option(spec, name);
    if (!o) throw UsageError("unknown option '--" + name + "' for '" + spec.name + "'");
    if (o->value_name.empty()) {
      if (inline_value) throw UsageError("--" + name + " takes no value");
      out.flags_[name] = true;
      continue;
    }
    if (inline_value) {
      out.values_[name] = *inline_value;
    } else if (i + 1 < args.size()) {
      out.values_[name] = args[++i];
    } else {
      throw UsageError("--" + name + " needs a value (" + o->value_name + ")");
    }
  }
  if (spec.positional_help.empty() && !out.positional.empty() && !out.help)
    throw UsageError("unexpected argument '" + out.positional.front() + "' for '" + spec.name +
                     "'");
  return out;
}

std::string help_text(const CommandSpec& spec) {
  std::ostringstream s;
  s << "usage: luminal " << spec.name << " " << spec.usage << "\n\n" << spec.summary << "\n";
  if (!spec.positional_help.empty()) s << "\narguments:\n  " << spec.positional_help << "\n";
  s << "\noptions:\n  -h, --help" << std::string(20, ' ') << "show this help and exit\n";
  for (const OptionSpec& o : spec.options) {
    std::string left = "--" + o.name + (o.value_name.empty() ? "" : " " + o.value_name);
    s << "  " << left;
    if (left.size() < 30) {
      s << std::string(30 - left.size(), ' ');
    } else {
      s << "\n" << std::string(32, ' ');
    }
    s << o.help;
    if (!o.default_text.empty()) s << " (default: " << o.default_text << ")";
    s << "\n";
  }
  return s.str();
}

}  // namespace luminal::cli
