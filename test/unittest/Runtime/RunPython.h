//===- RunPython.h - run code under Debian's python3 in a test -*- C++ -*-===//
//
// Tests that ask numpy or torch (the references nobody here wrote) for an
// answer: the code's stdout and stderr, "" when python3 could not start.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_UNITTEST_RUNTIME_RUNPYTHON_H
#define DLC_TEST_UNITTEST_RUNTIME_RUNPYTHON_H

#include <cstdio>
#include <string>

namespace dlc_test {

/// Runs `code` (no double quotes in it) under /usr/bin/python3 -c.
inline std::string runPython(const std::string &code) {
  std::string command = "/usr/bin/python3 -c \"" + code + "\" 2>&1";
  std::string output;
  if (FILE *pipe = popen(command.c_str(), "r")) {
    char buffer[256];
    while (fgets(buffer, sizeof(buffer), pipe))
      output += buffer;
    pclose(pipe);
  }
  return output;
}

} // namespace dlc_test

#endif // DLC_TEST_UNITTEST_RUNTIME_RUNPYTHON_H
