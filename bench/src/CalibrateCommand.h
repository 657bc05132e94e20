//===- CalibrateCommand.h - dlc-bench calibrate -----------------*- C++ -*-===//

#ifndef DLC_BENCH_CALIBRATECOMMAND_H
#define DLC_BENCH_CALIBRATECOMMAND_H

#include <ostream>
#include <string>
#include <vector>

namespace dlc::bench {

/// `dlc-bench calibrate [-o OUT.json] [--check PROFILE.json...] PROFILE.json...`:
/// compiles each profile's configuration, fits the cost model's parameters
/// (CostModel.h) to the measured time of every launch kind, writes them to
/// OUT, and prints predicted against measured step times of the profiles
/// fitted on and of the --check ones. `--params FIT.json --check ...` fits
/// nothing: it prints FIT.json's predictions beside the profiles' measured
/// times (an out-of-sample check of a checked-in fit). Returns the exit code.
int runCalibrate(const std::vector<std::string> &args, std::ostream &os, std::ostream &errors);

} // namespace dlc::bench

#endif // DLC_BENCH_CALIBRATECOMMAND_H
