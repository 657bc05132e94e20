//===- ReportCommand.cpp - `dlc-bench report`: reports merged into a page -===//

#include "Html.h"
#include "Json.h"

#include <fstream>
#include <iostream>

namespace dlc::bench {

int runReport(const std::vector<std::string> &args, std::ostream &errors) {
  std::vector<std::string> paths;
  std::string output = "-";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o" && i + 1 < args.size()) {
      output = args[++i];
    } else if (args[i].rfind("-", 0) == 0) {
      errors << "dlc-bench report: error: unknown option '" << args[i] << "'\n";
      paths.clear();
      break;
    } else {
      paths.push_back(args[i]);
    }
  }
  if (paths.empty()) {
    errors << "usage: dlc-bench report A.json [B.json ...] [-o report.html]\n";
    return 1;
  }
  std::vector<ReportSource> sources;
  for (const std::string &path : paths) {
    // A report is named by its file name, or its path where names repeat.
    std::string label = path.substr(path.find_last_of('/') + 1);
    for (const std::string &other : paths)
      if (other != path && other.substr(other.find_last_of('/') + 1) == label)
        label = path;
    ReportSource source{label, {}};
    std::string error;
    if (!readReport(path, source.results, error)) {
      errors << "dlc-bench report: error: " << error << "\n";
      return 1;
    }
    sources.push_back(std::move(source));
  }
  std::ofstream file;
  std::ostream *os = &std::cout;
  if (output != "-") {
    file.open(output);
    if (!file) {
      errors << "dlc-bench report: error: cannot write " << output << "\n";
      return 1;
    }
    os = &file;
  }
  writeHtml(*os, sources);
  os->flush();
  if (!*os) {
    errors << "dlc-bench report: error: cannot write " << output << "\n";
    return 1;
  }
  return 0;
}

} // namespace dlc::bench
