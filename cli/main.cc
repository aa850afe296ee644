// blkbench: the command-line client. All logic lives in cli.cc (RunCli).
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return blkbench::RunCli(args, std::cout, std::cerr);
}
