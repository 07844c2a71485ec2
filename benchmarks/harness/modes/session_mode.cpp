// --session first-gpu: docs/gpu-session.md's sequence in one command, under a time budget. Each
// step is a child kcnn-bench (this executable) with its own suite and options, so that a failed or
// interrupted step leaves the others' files; the steps run in order of value while the budget
// lasts, a step that would overrun it is interrupted (SIGTERM: the case running is written and the
// files are closed; SIGKILL after a grace period), and the rest are skipped. Then the session's
// record and kcnn-report's report, all within the budget. The session itself never initialises
// Kokkos: the device stays free for its steps (a GPU in exclusive-process mode takes one process).
#include "modes/modes.hpp"

#include "device/context.hpp"
#include "measure/clock.hpp"
#include "results/json.hpp"
#include "suites/suite.hpp"

#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>
#include <utility>

#include <sys/wait.h>
#include <unistd.h>

namespace kcnn::bench {

namespace {

namespace fs = std::filesystem;
using session_clock = budget_clock::clock;  // deadlines of the steps, never a figure

volatile std::sig_atomic_t session_signal = 0;  // SIGINT or SIGTERM received by the session
extern "C" void on_session_signal(int sig) { session_signal = sig; }

struct session_step {
  std::string name;
  std::vector<std::string> argv;  // argv[0] is the program
  std::string skip_reason;        // not empty: not run, and why
  double max_share = 1.0;         // the most of the session's budget the step may take
  int stop_signal = SIGTERM;      // what ends it at its deadline (ncu writes its log on SIGINT)
};

// The Nsight Compute metrics docs/gpu-session.md maps onto the model's columns.
const char* const ncu_metrics =
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,"
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,"
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,"
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,"
    "launch__grid_size,launch__block_size,launch__registers_per_thread,"
    "sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum";

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path p = fs::path(dir) / program;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

std::string self_executable(const char* argv0) {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

// argv as one shell command line: words with shell characters single-quoted.
std::string shell_words(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:+@%") == std::string::npos) {
      s += a;
      continue;
    }
    s += '\'';
    for (char ch : a) s += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    s += '\'';
  }
  return s;
}

struct step_outcome {
  std::string status;  // ok, failed (exit N), interrupted at the budget, skipped: ...
  double seconds = 0;
};

// Runs argv as a child, in a process group of its own (ncu's profiled child goes with it), until
// it ends, the session is signalled, or terminate_at passes: then the step's stop signal to the
// group (SIGTERM, or SIGINT for ncu, which then writes what it collected), and SIGKILL after the
// grace period.
step_outcome run_step(const session_step& step, session_clock::time_point terminate_at,
                      session_clock::duration grace) {
  const auto start = session_clock::now();
  std::vector<char*> args;  // built before fork: the child only execs
  for (const auto& a : step.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) return {"failed (fork: " + std::string(std::strerror(errno)) + ")", 0};
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execv(args[0], args.data());
    const char msg[] = "kcnn-bench: --session: cannot start a step\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: no signal may reach the group before the child made it
  bool terminated = false, killed = false;
  int by_signal = 0;
  auto terminated_at = start;
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return {"failed (waitpid: " + std::string(std::strerror(errno)) + ")", 0};
    const auto now = session_clock::now();
    if (!terminated && (session_signal || now >= terminate_at)) {
      by_signal = session_signal;
      ::kill(-pid, session_signal ? SIGTERM : step.stop_signal);
      terminated = true;
      terminated_at = now;
    } else if (terminated && !killed && now >= terminated_at + grace) {
      ::kill(-pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  step_outcome o;
  o.seconds = std::chrono::duration<double>(session_clock::now() - start).count();
  if (terminated) {
    o.status = by_signal ? "interrupted by signal " + std::to_string(by_signal) : "interrupted at the budget";
    if (killed) o.status += " (killed after the grace period: its .csv.partial holds the finished cases)";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    o.status = "ok";
  } else if (WIFEXITED(status)) {
    o.status = "failed (exit " + std::to_string(WEXITSTATUS(status)) + ")";
  } else {
    o.status = "failed (signal " + std::to_string(WTERMSIG(status)) + ")";
  }
  return o;
}

// The device's results folder name and name, from a child kcnn-bench --print-device (this process
// does not touch the device).
std::pair<std::string, std::string> device_of(const std::string& self, const std::vector<std::string>& kokkos_args) {
  std::vector<std::string> cmd = {self, "--print-device"};
  cmd.insert(cmd.end(), kokkos_args.begin(), kokkos_args.end());
  bool ok = false;
  const std::string out = run_command(shell_words(cmd), ok);
  const auto tab = out.find('\t');
  if (!ok || tab == std::string::npos)
    throw std::runtime_error("--session: " + self + " --print-device did not name the device: " + out);
  return {out.substr(0, tab), out.substr(tab + 1)};
}

// The model runs of this GPU committed with the sources (results/gpu-model-<gpu>-...), for the
// report's model-against-measurement section.
std::vector<std::string> committed_model_runs(const std::string& device_slug) {
  std::vector<std::string> out;
  const fs::path results = fs::path(KCNN_SOURCE_DIR) / "results";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(results, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind("gpu-model-", 0) != 0) continue;
    const std::string gpu = name.substr(10, name.find('-', 10) - 10);  // h100 of gpu-model-h100-sxm
    if (!gpu.empty() && device_slug.find(gpu) != std::string::npos) out.push_back(e.path().string());
  }
  return out;
}

// What every step is given: each option the session did not consume (--out, --quick, --cold,
// filters, --kokkos-*); `kokkos_args`: the Kokkos ones, also for the device query.
struct session_args {
  std::vector<std::string> common, kokkos_args;
};

session_args pass_through_args(int argc, char** argv) {
  session_args s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--session" || a == "--session-minutes") { ++i; continue; }
    if (a.rfind("--session=", 0) == 0 || a.rfind("--session-minutes=", 0) == 0) continue;
    s.common.push_back(a);
    if (a.rfind("--kokkos-", 0) == 0) s.kokkos_args.push_back(a);
  }
  return s;
}

// A step that is this kcnn-bench with `args`, then the common options.
session_step bench_step(const std::string& self, const session_args& sa, std::string name, std::vector<std::string> args) {
  session_step s{std::move(name), {self}, {}};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.argv.insert(s.argv.end(), sa.common.begin(), sa.common.end());
  return s;
}

// A step that profiles the cases of suites/<case_list> under Nsight Compute, collecting `what`
// (ncu's --metrics or --section options), its log in <stamp>-<log_suffix>, the profiled run's rows
// in <out>/<profiled> (apart from the timed results).
session_step profile_step(const std::string& self, const session_args& sa, const options& opt, const fs::path& device_dir,
                          const std::string& stamp, session_step ncu, const std::string& case_list,
                          const std::string& log_suffix, const std::vector<std::string>& what,
                          const std::string& profiled) {
  const std::string ncu_path = find_on_path("ncu");
  std::string ncu_suite;
  try {
    ncu_suite = resolve_suite("ncu");
  } catch (const std::exception& e) {
    ncu.skip_reason = std::string("skipped: ") + e.what();
  }
  if (ncu_path.empty()) {
    ncu.skip_reason = "skipped: ncu not on PATH";
  } else if (!ncu_suite.empty()) {
    const std::string cases = (fs::path(ncu_suite).parent_path() / case_list).string();
    const std::string log = (device_dir / (stamp + "-" + log_suffix)).string();
    ncu.argv = {ncu_path, "--profile-from-start", "off", "--clock-control", "none", "--nvtx", "--print-nvtx-rename",
                "kernel", "--print-units", "base", "--csv", "--log-file", log};
    ncu.argv.insert(ncu.argv.end(), what.begin(), what.end());
    ncu.argv.insert(ncu.argv.end(), {self, "--suite", "ncu", "--key-file", cases});
    ncu.argv.insert(ncu.argv.end(), sa.common.begin(), sa.common.end());
    ncu.argv.insert(ncu.argv.end(), {"--profile-only", "--out", (fs::path(opt.out) / profiled).string()});
  }
  return ncu;
}

// Nsight Compute right after smoke, over the committed list of DRAM-sized cases
// (suites/ncu.csv, suites/ncu_cases.txt): --profile-only validates each case and runs it once
// inside a capture range, and ncu captures only those (--profile-from-start off), so nothing
// else is profiled (profiling a whole run did not finish one case group in 30 s on an H200).
// The GPU's own clocks (--clock-control none: ncu's default locks the base clock). Its metrics
// in <stamp>-ncu-metrics.csv beside the results (kcnn-report passes over CSVs that are not
// results), each kernel named after its case's NVTX range (--print-nvtx-rename kernel) in base units,
// what scripts/ncu-counters turns into kcnn-report's counters; the profiled run's rows go to a
// folder of their own. At most a third of the budget, ended by SIGINT, on which ncu writes
// what it has.
session_step ncu_step(const std::string& self, const session_args& sa, const options& opt, const fs::path& device_dir,
                      const std::string& stamp) {
  return profile_step(self, sa, opt, device_dir, stamp, {"ncu (model against hardware)", {}, {}, 1.0 / 3.0, SIGINT},
                      "ncu_cases.txt", "ncu-metrics.csv", {"--metrics", ncu_metrics}, "ncu-profiled");
}

// Why the kernels of a few cases wait (suites/ncu_stall_cases.txt: the convolution and fc kernels
// of issue 50, and memory-bound forms with one and with several loads in flight): Nsight Compute's
// warp-state and scheduler sections, whose metrics ncu names for the GPU at hand, so no metric name
// is guessed here (one that a GPU's ncu does not know fails the whole run), and each kernel's time
// (the counters step's metric), which weighs a case's kernels. One row per kernel
// with every metric as a column (--page raw), in <stamp>-ncu-warp-states.csv, which
// scripts/ncu-warp-states turns into one row per case. At most a tenth of the budget.
session_step warp_states_step(const std::string& self, const session_args& sa, const options& opt,
                              const fs::path& device_dir, const std::string& stamp) {
  return profile_step(self, sa, opt, device_dir, stamp, {"ncu warp states (why kernels wait)", {}, {}, 0.1, SIGINT},
                      "ncu_stall_cases.txt", "ncu-warp-states.csv",
                      {"--page", "raw", "--section", "WarpStateStats", "--section", "SchedulerStats", "--metrics",
                       "gpu__time_duration.sum"},
                      "ncu-profiled-warp-states");
}

// perf_memory's memory-bound GPU forms at their DRAM-sized shapes (suites/perf_memory_model.txt:
// each op's row-mapped and flat forms in every layout, the GPU model's committed cases), against
// the same run's copy ceilings: issue 49's target, before the rest of the suite.
session_step memory_forms_step(const std::string& self, const session_args& sa) {
  std::string cases, skip;
  try {
    cases = (fs::path(resolve_suite("perf_memory")).parent_path() / "perf_memory_model.txt").string();
  } catch (const std::exception& e) {
    skip = std::string("skipped: ") + e.what();
  }
  session_step s = bench_step(self, sa, "perf_memory memory-bound forms", {"--suite", "perf_memory", "--key-file", cases});
  s.skip_reason = skip;
  return s;
}

// The session's steps in order of value. The device's memory spaces that cross the link (managed
// memory, pinned host memory) in a study of their own, once: at most 3 repetitions of a case
// slower than 10 ms (their rows took a fifth of the first H200 session, and the three pinned VGG
// rows 145 s of the third, for findings already known); every other step keeps to the device's
// own spaces. The sized suites fill the chip (--fill: activations of at least 4x the L2).
std::vector<session_step> session_steps(const std::string& self, const session_args& sa, session_step ncu,
                                        session_step warp_states) {
  const std::string on_device = "global,scratch,constant,readonly";
  const std::string over_link = "uvm_cold,uvm_prefetch,uvm_advise,pinned";
  return {
      bench_step(self, sa, "smoke", {"--suite", "smoke", "--space", on_device}),
      std::move(ncu),
      memory_forms_step(self, sa),
      bench_step(self, sa, "vgg16_conv3_1 ranking", {"--suite", "vgg16_conv3_1", "--batch", "32", "--space", on_device}),
      std::move(warp_states),
      bench_step(self, sa, "perf_memory", {"--suite", "perf_memory", "--fill", "--space", on_device}),
      bench_step(self, sa, "perf_compute", {"--suite", "perf_compute", "--fill", "--space", on_device}),
      bench_step(self, sa, "memory spaces over the link", {"--suite", "smoke", "--space", over_link, "--slow-reps", "3"}),
      bench_step(self, sa, "transfer", {"--suite", "transfer"}),
      bench_step(self, sa, "uvm_oversubscription", {"--suite", "uvm_oversubscription", "--uvm-cap", "8"}),
  };
}

// The session's time: the whole budget, the steps' grace period, and the deadline of the steps.
// The report's minute and the grace period are kept out of the steps' budget, so that the
// session ends within it.
struct session_times {
  session_clock::time_point start;
  session_clock::duration budget, grace;
  session_clock::time_point steps_deadline;
};

session_times plan_times(session_clock::time_point start, double session_minutes) {
  session_times t;
  t.start = start;
  t.budget = std::chrono::duration_cast<session_clock::duration>(std::chrono::duration<double>(session_minutes * 60.0));
  const auto tenth = std::chrono::duration_cast<session_clock::duration>(t.budget * 0.1);
  const auto report_reserve = std::min<session_clock::duration>(std::chrono::seconds(60), tenth);
  t.grace = std::min<session_clock::duration>(std::chrono::seconds(30), tenth);
  t.steps_deadline = start + t.budget - report_reserve - t.grace;
  return t;
}

void catch_session_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_session_signal;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

// Runs the steps in order while the budget lasts (a step is not started with under 20 s left);
// each step's outcome into `record_steps`. Returns how many failed.
int run_steps(const std::vector<session_step>& steps, const session_times& t, json& record_steps) {
  int failed = 0;
  for (const auto& step : steps) {
    step_outcome o;
    if (session_signal) {
      o.status = "skipped: session interrupted";
    } else if (!step.skip_reason.empty()) {
      o.status = step.skip_reason;
    } else if (t.steps_deadline - session_clock::now() < std::chrono::seconds(20)) {
      o.status = "skipped: budget spent";
    } else {
      std::cout << "kcnn-bench: session step '" << step.name << "': " << shell_words(step.argv) << "\n";
      const auto share = std::chrono::duration_cast<session_clock::duration>(t.budget * step.max_share);
      o = run_step(step, std::min(t.steps_deadline, session_clock::now() + share), t.grace);
    }
    if (o.status.rfind("failed", 0) == 0) ++failed;
    std::cout << "kcnn-bench: session step '" << step.name << "': " << o.status << " (" << std::fixed
              << std::setprecision(1) << o.seconds << " s)\n";
    record_steps.push(json::object()
                               .set("step", step.name)
                               .set("command", step.argv.empty() ? std::string() : shell_words(step.argv))
                               .set("status", o.status)
                               .set("seconds", o.seconds));
  }
  return failed;
}

// The report over everything this device's folder holds, with the committed model runs of
// the same GPU beside it. Returns its status (the report's index, or why not); counts a failure.
std::string run_report(const std::string& self, const fs::path& device_dir, const std::string& device_slug,
                       const session_times& t, int& failed) {
  std::string report = std::getenv("KCNN_REPORT") ? std::getenv("KCNN_REPORT") : "";
  if (report.empty()) {
    const fs::path beside = fs::path(self).parent_path().parent_path() / "reports" / "kcnn-report";
    report = fs::exists(beside) ? beside.string() : find_on_path("kcnn-report");
  }
  const fs::path report_dir = device_dir / "report";
  bool any_results = false;
  for (const auto& e : fs::directory_iterator(device_dir))
    any_results = any_results || e.path().extension() == ".csv";
  if (session_signal) return "skipped: session interrupted";
  if (!any_results) return "skipped: no results";
  if (report.empty()) return "skipped: kcnn-report not found (set KCNN_REPORT)";
  session_step r{"report", {report, device_dir.string()}, {}};
  for (const auto& m : committed_model_runs(device_slug)) r.argv.push_back(m);
  r.argv.insert(r.argv.end(), {"-o", report_dir.string()});
  std::cout << "kcnn-bench: session report: " << shell_words(r.argv) << "\n";
  const step_outcome o = run_step(r, std::max(t.start + t.budget, session_clock::now() + std::chrono::seconds(10)),
                                  std::chrono::seconds(5));
  if (o.status != "ok") ++failed;
  return o.status == "ok" ? report_dir.string() + "/index.html" : o.status;
}

// The session's record, <stamp>-session.json, written whole or not at all (through .partial).
void write_session_record(const fs::path& record, const options& opt, const std::string& device_name, double total_s,
                          const json& record_steps, const std::string& report_status) {
  {
    std::ofstream f(record.string() + ".partial");
    f << json::object()
             .set("session", opt.session)
             .set("device", device_name)
             .set("timestamp", utc_iso8601())
             .set("budget_minutes", opt.session_minutes)
             .set("seconds", total_s)
             .set("steps", record_steps)
             .set("report", report_status)
             .dump(2)
      << "\n";
    if (!f) throw std::runtime_error("cannot write " + record.string());
  }
  fs::rename(record.string() + ".partial", record);
}

}  // namespace

int run_session_mode(int argc, char** argv, const options& opt) {
  const auto start = session_clock::now();
  const std::string self = self_executable(argv[0]);
  const session_args sa = pass_through_args(argc, argv);
  const auto [device_slug, device_name] = device_of(self, sa.kokkos_args);
  const fs::path device_dir = fs::path(opt.out) / device_slug;
  fs::create_directories(device_dir);
  const std::string stamp = utc_stamp();

  const std::vector<session_step> steps = session_steps(self, sa, ncu_step(self, sa, opt, device_dir, stamp),
                                                        warp_states_step(self, sa, opt, device_dir, stamp));
  const session_times t = plan_times(start, opt.session_minutes);
  std::cout << "kcnn-bench: session " << opt.session << " on " << device_name << ", budget "
            << opt.session_minutes << " min, results under " << device_dir.string() << "\n";
  catch_session_signals();

  json record_steps = json::array();
  int failed = run_steps(steps, t, record_steps);
  const std::string report_status = run_report(self, device_dir, device_slug, t, failed);

  const double total_s = std::chrono::duration<double>(session_clock::now() - start).count();
  const fs::path record = device_dir / (stamp + "-session.json");
  write_session_record(record, opt, device_name, total_s, record_steps, report_status);
  std::cout << "kcnn-bench: session " << opt.session << " done in " << std::fixed << std::setprecision(0)
            << total_s << " s: " << record.string() << "; report: " << report_status << "\n";
  if (session_signal) return 128 + session_signal;
  return failed ? 1 : 0;
}

}  // namespace kcnn::bench
