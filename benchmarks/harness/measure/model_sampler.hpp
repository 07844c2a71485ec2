#pragma once
// The device model as a sampler (gpu-model builds only): a sample runs the work once with the
// model recording (benchmarks/model/gpu_model.hpp) and returns the modelled seconds; the figures
// of a case's run become its row's model_* columns. Nothing is timed: whatever the harness would
// time (cases, transforms, forward-pass steps) is modelled the same way.
#include "measure/sampler.hpp"

#include <gpu_model.hpp>

#include <string>
#include <vector>

namespace kcnn::bench {

class device_model_sampler final : public sampler {
 public:
  // The description `device` of `devices_file` (default: the file shipped with kcnn).
  device_model_sampler(const std::string& devices_file, const std::string& device, model::trace_limits limits);
  const char* name() const override { return "gpu_model"; }
  timing_sample take(const timed_work& w) const override;
  bool models() const override { return true; }
  model_figures last_model(const bench_case& c) const override;
  std::string context_json() const override;

 private:
  std::string devices_file_;
  std::vector<model::device_description> devices_;
  const model::device_description* device_ = nullptr;
  model::register_table registers_;  // the kernels' registers (benchmarks/model/registers.csv)
  model::trace_limits limits_;
  mutable model::case_figures last_;
  mutable const bench_case* last_case_ = nullptr;
};

// A row's model figures from a case's (exposed for tests).
model_figures row_figures(const model::case_figures& c);

}  // namespace kcnn::bench
