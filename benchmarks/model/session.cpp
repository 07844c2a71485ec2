// A model session (gpu_model.hpp): opening one points the recorder at a device, takes this
// thread's stack bounds (what lies inside them is a simulated thread's registers, not memory) and
// sizes the L1s and the L2; finish() hands back the case's launches, the untraced blocks' DRAM
// reads capped by the case's read operands, with the predicted time (time_model.cpp).
#include "recorder.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>
#include <pthread.h>

namespace kcnn::model {

using namespace detail;

session::session(const device_description& d, trace_limits limits, const register_table* registers) {
  recorder& r = rec;
  if (r.session_open) throw std::logic_error("kcnn model: a model session is already open");
  r.dev = &d;
  r.registers = registers;
  r.limits = limits;
  r.session_open = true;
  r.launches.clear();
  r.executed_flops = 0;
  pthread_attr_t attr;
  void* stack = nullptr;
  std::size_t stack_bytes = 0;
  if (pthread_getattr_np(pthread_self(), &attr) != 0 || pthread_attr_getstack(&attr, &stack, &stack_bytes) != 0)
    throw std::runtime_error("kcnn model: cannot read this thread's stack bounds");
  pthread_attr_destroy(&attr);
  r.stack_hi = reinterpret_cast<std::uintptr_t>(stack) + stack_bytes;
  r.l1.assign(std::size_t(d.sms), sector_cache{});
  r.l2.configure(d.l2_bytes, d.line_bytes, d.sector_bytes, 16);
}

session::~session() {
  if (open_) {
    rec.session_open = false;
    recording_now = false;
  }
}

namespace {
// finish()'s cap: the untraced blocks' DRAM reads, scaled down together so that the case's reads
// do not exceed max(its traced reads, its read operands). True when it changed anything.
bool cap_extrapolated_reads(const device_description& d, std::vector<launch_figures>& launches, double read_bytes) {
  if (read_bytes <= 0 || read_bytes > 0.5 * d.l2_bytes) return false;
  double traced = 0, extrapolated = 0;
  for (const launch_figures& f : launches) {
    traced += f.dram_read_bytes - f.extrapolated_dram_read_bytes;
    extrapolated += f.extrapolated_dram_read_bytes;
  }
  const double allowed = std::max(0.0, read_bytes - traced);
  if (extrapolated <= allowed) return false;
  const double scale = allowed / extrapolated;
  for (launch_figures& f : launches) {
    const double kept = f.extrapolated_dram_read_bytes * scale;
    f.dram_read_bytes -= f.extrapolated_dram_read_bytes - kept;
    f.extrapolated_dram_read_bytes = kept;
  }
  return true;
}
}  // namespace

case_figures session::finish(double flops, double read_bytes) {
  recorder& r = rec;
  open_ = false;
  r.session_open = false;
  recording_now = false;
  case_figures c;
  c.launches = std::move(r.launches);
  r.launches.clear();
  c.dram_reads_capped = cap_extrapolated_reads(*r.dev, c.launches, read_bytes);
  r.l1.clear();
  r.l2.configure(0, 128, 32, 16);
  r.registers = nullptr;
  c.flops = flops;
  c.executed_flops = r.executed_flops;
  r.executed_flops = 0;
  predict(*r.dev, c);
  return c;
}

}  // namespace kcnn::model
