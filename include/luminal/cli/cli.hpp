#pragma once
// The `luminal` command as a library function, shared by the C++ program
// (src/tools/luminal_main.cpp) and the Python package's entry point.
//
//   luminal generate --model PATH|smollm2 --prompt TEXT [options]
//   luminal embed    --model PATH|minilm TEXT...
//   luminal info     PATH|smollm2|minilm
//
// `luminal <command> --help` describes each. Results go to stdout, errors and
// progress to stderr; the exit status is 0 on success, 1 on an error while
// running, 2 on bad usage.

namespace luminal::cli {

/// Runs the command line (argv[0] is the program name). Never throws.
int run(int argc, char** argv);

}  // namespace luminal::cli
