// kcnn-bench's top level: parse the command line, load the suites, then one mode: --help,
// --list, --catalogue, --session, --ceilings, --memory-plan (modes/), or the benchmark run
// (benchmark_run.cpp, with --network's forward passes after it). With --mpi, --resume and the
// shard split are agreed here, before the run.
#include "measure/stop.hpp"
#include "run/runner.hpp"

#include "modes/catalogue.hpp"
#include "device/context.hpp"
#include "device/host_stores.hpp"
#include "modes/modes.hpp"
#include "results/rank_rows.hpp"
#include "run/benchmark_run.hpp"
#include "run/mpi_job.hpp"
#include "cli/options.hpp"
#include "suites/selection.hpp"
#include "suites/suite.hpp"

#include <kcnn/compat.hpp>

#include <Kokkos_Core.hpp>

#include <iostream>
#include <sstream>

#if defined(__SANITIZE_ADDRESS__)
#define KCNN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KCNN_ASAN 1
#endif
#endif
#if defined(KCNN_ASAN)
// Under AddressSanitizer an allocation larger than it supports aborts the process by default;
// kcnn-bench must see it fail as on any build (Kokkos throws, the case is skipped: out of memory).
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace kcnn::bench {

namespace {

// Shard mode: this rank's cases, chosen by estimated cost (operand bytes at 50 GB/s plus FLOPs at
// 500 GFLOP/s: only the ratios matter) so that every rank gets about as much work.
std::vector<planned_case> this_ranks_share(std::vector<planned_case> cases, const case_settings& settings,
                                           mpi_job& job) {
  // Decided on rank 0 and sent to the others: a case may size itself from its own device's free
  // memory (the UVM study), and every rank must see the same split.
  std::string owners;
  if (job.rank() == 0) {
    std::vector<double> cost;
    for (const auto& c : cases) {
      double est = 0;
      try {
        const case_cost k = c.variant->make(c.spec, settings)->cost();
        est = k.bytes / 50e9 + k.flops / 500e9;
      } catch (const std::exception&) {
      }
      cost.push_back(est);
    }
    for (int o : assign_by_cost(cost, job.size())) owners += std::to_string(o) + " ";
  }
  std::istringstream in(job.broadcast(owners, "the split of the cases"));
  std::vector<int> owner(cases.size(), 0);
  for (auto& o : owner) in >> o;
  std::vector<planned_case> mine;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (owner[i] == job.rank()) mine.push_back(std::move(cases[i]));
  return mine;
}

// --resume: the cases not yet ok in the file (after adopting the rows a dead MPI job's ranks
// left beside it). Every rank must agree on the outcome before it goes on (the file may not be
// readable on every node), so errors are agreed on rather than returned from. False: an error,
// said on stderr.
bool resume_from_file(const options& opt, mpi_job& job, std::vector<planned_case>& cases) {
  const std::size_t before = cases.size();
  std::string error;
  try {
    if (job.rank() == 0) {
      const std::size_t adopted = adopt_rank_rows(opt.resume);
      if (adopted) std::cerr << "kcnn-bench: --resume: adopted " << adopted << " rows of other ranks into " << opt.resume << "\n";
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (job.agree_max(error.empty() ? 0 : 1, "the adoption of the other ranks' rows") == 0) {
    try {
      cases = not_yet_finished(std::move(cases), opt.resume);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (job.agree_max(error.empty() ? 0 : 1, "reading the file to resume") != 0) {
    if (!error.empty()) std::cerr << "kcnn-bench: error: " << error << "\n";
    return false;
  }
  if (job.rank() == 0)
    std::cerr << "kcnn-bench: --resume: " << before - cases.size() << " of " << before << " cases already in "
              << opt.resume << "\n";
  return true;
}

// The options, or a usage error said on stderr (rank 0's) and exit status 2.
bool parse_command_line(int argc, char** argv, const mpi_job& job, options& opt) {
  try {
    opt = parse_options(argc, argv);
    if (opt.mpi != mpi_mode::none && opt.network)
      throw usage_error("--mpi and --network exclude each other (a forward pass runs on one device)");
    if (opt.mpi == mpi_mode::replicate && !opt.resume.empty())
      throw usage_error("--resume works with --mpi shard, not replicate (a contention study is rerun whole)");
    return true;
  } catch (const usage_error& e) {
    if (job.rank() == 0) std::cerr << "kcnn-bench: " << e.what() << "\n";
    return false;
  }
}

int run(int argc, char** argv) {
  mpi_job& job = mpi_job::instance();
  options opt;
  if (!parse_command_line(argc, argv, job, opt)) return 2;
  job.set_timeout(opt.mpi_timeout_s);
  // Modes that measure nothing per device are rank 0's alone.
  if (job.rank() != 0 && (opt.help || opt.catalogue || opt.list || opt.ceilings_only || opt.memory_plan)) return 0;
  if (opt.help) {
    std::cout << usage_text();
    return 0;
  }
  if (opt.catalogue) {
    std::cout << catalogue_markdown(registry::instance());
    return 0;
  }
  if (opt.print_device) {
    const device_info d = query_device();
    std::cout << d.slug << '\t' << d.name << '\n';
    return 0;
  }
  if ((opt.memory_plan || opt.network) && !opt.suites_given) opt.suites = {"all"};

  std::vector<suite> suites;
  selection sel;
  try {
    suites = load_suites(opt);
    if (opt.fill) {
      // Sized to this device's last-level cache and memory.
      const device_info d = query_device();
      for (auto& su : suites) fill_device(su, d.l2_or_llc_bytes, d.memory_bytes);
    }
    if (opt.ceilings_only && !opt.list) return run_ceilings_mode(argc, argv, opt);
    if (opt.memory_plan && !opt.list) return run_memory_plan_mode(argc, argv, opt, suites);
    sel = select_cases(opt, suites);
  } catch (const suite_error& e) {
    std::cerr << "kcnn-bench: error: " << e.what() << "\n";
    return 2;
  }
  if (opt.list) return list_cases(sel);
  if (!sel.not_applicable.empty())
    std::cerr << "kcnn-bench: " << sel.not_applicable.size() << " selected case(s) not applicable here (--list says why)\n";
  for (const auto& k : sel.unmatched_keys)
    std::cerr << "kcnn-bench: warning: key pattern " << k << " selects no case of this build\n";
  if (!opt.resume.empty()) {
    if (!resume_from_file(opt, job, sel.cases)) return 2;
    if (sel.cases.empty()) {
      if (job.rank() == 0) std::cerr << "kcnn-bench: nothing left to run\n";
      return 0;
    }
  }
  if (sel.cases.empty()) {
    std::cerr << "kcnn-bench: error: no case matches the filters (try --list)\n";
    return 2;
  }
  const std::size_t cases_in_all = sel.cases.size();
  if (opt.mpi == mpi_mode::shard) {
    case_settings settings;
    settings.uvm_cap_bytes = opt.uvm_cap_gib * double(1 << 30);
    sel.cases = this_ranks_share(std::move(sel.cases), settings, job);
  }
  return run_benchmarks(argc, argv, opt, suites, std::move(sel.cases), cases_in_all);
}


// --session runs before Kokkos is initialised: its steps are processes of their own and need the
// device, which this process then never holds. Its options are parsed without --kokkos-* (those go
// to the steps).
bool wants_session(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--session" || a.rfind("--session=", 0) == 0) return true;
  }
  return false;
}

int run_session(int argc, char** argv) {
  std::vector<char*> own;
  for (int i = 0; i < argc; ++i)
    if (i == 0 || std::string(argv[i]).rfind("--kokkos-", 0) != 0) own.push_back(argv[i]);
  options opt;
  try {
    opt = parse_options(int(own.size()), own.data());
  } catch (const usage_error& e) {
    std::cerr << "kcnn-bench: " << e.what() << "\n";
    return 2;
  }
  try {
    return run_session_mode(argc, argv, opt);
  } catch (const std::exception& e) {
    std::cerr << "kcnn-bench: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int run_main(int argc, char** argv) {
  if (wants_session(argc, argv)) return run_session(argc, argv);  // its own handlers: it passes signals on
  install_stop_handlers();
  // MPI first (--mpi): Kokkos then maps this rank to a node-local device by the local rank that
  // mpirun or srun exports.
  mpi_job::init(argc, argv);
  Kokkos::initialize(argc, argv);  // removes --kokkos-* flags from argv
  // Host gemm-based variants and their peers at the host backend's thread count (1 on Serial;
  // on a GPU build, the host execution space's: the device's concurrency means nothing to a BLAS).
  set_blas_threads(compat::concurrency(Kokkos::DefaultHostExecutionSpace()));
  int rc = 2;
  try {
    // A malformed KCNN_STREAMING_STORE_BYTES is bad input: refused before anything is measured.
    (void)run_host_stores();
  } catch (const std::invalid_argument& e) {
    std::cerr << "kcnn-bench: error: " << e.what() << "\n";
    Kokkos::finalize();
    mpi_job::finalize();
    return 2;
  }
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    // With other ranks waiting on this one, end the job rather than leave them hanging.
    if (mpi_job::instance().active()) mpi_job::instance().abort(std::string("error: ") + e.what());
    std::cerr << "kcnn-bench: error: " << e.what() << "\n";
    rc = 1;
  }
  Kokkos::finalize();
  mpi_job::finalize();
  return rc;
}

}  // namespace kcnn::bench
