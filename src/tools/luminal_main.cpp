// The `luminal` command: generate / embed / info (see include/luminal/cli/cli.hpp).
// The implementation lives in the library so that the Python package's
// `luminal` entry point runs the same code.

#include "luminal/cli/cli.hpp"

int main(int argc, char** argv) {
  return luminal::cli::run(argc, argv);
}
