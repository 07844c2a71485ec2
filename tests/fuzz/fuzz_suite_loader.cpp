// libFuzzer target for the suite-file loader (built with -DKCNN_FUZZ=ON, Clang). Any input must
// either load into layers whose shapes are all positive, or be refused with a suite_error whose
// message starts with the file's name. Anything else (another exception, a crash, a sanitizer
// report, a layer with a non-positive shape) is a finding.
#include "suites/suite.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

const std::string file = "fuzz.csv";

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_suite_loader: %s\n", what.c_str());
  std::abort();
}

void check_refusal(const kcnn::bench::suite_error& e) {
  if (std::string(e.what()).rfind(file, 0) != 0)
    finding(std::string("error message does not name the file: ") + e.what());
}

void check_loaded(const kcnn::bench::suite& su) {
  if (su.layers.empty()) finding("a suite without layers loaded");
  for (const auto& l : su.layers) {
    if (l.line < 1 || l.file != file) finding("layer " + l.layer + " has no file:line");
    if (l.n <= 0 || l.c <= 0 || l.h <= 0 || l.w <= 0)
      finding("layer " + l.layer + " loaded with a non-positive input shape");
    if (l.out.n <= 0 || l.out.c <= 0 || l.out.h <= 0 || l.out.w <= 0)
      finding("layer " + l.layer + " loaded with a non-positive output shape");
    if (l.stride <= 0 || l.groups <= 0 || l.repeat <= 0)
      finding("layer " + l.layer + " loaded with a non-positive stride, groups or repeat");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  kcnn::bench::suite su;
  try {
    su = kcnn::bench::parse_suite(file, text);
  } catch (const kcnn::bench::suite_error& e) {
    check_refusal(e);
    return 0;
  }
  check_loaded(su);
  // --batch re-derives every shape and re-checks the chain: the same contract holds.
  try {
    kcnn::bench::set_batch(su, 3);
    check_loaded(su);
  } catch (const kcnn::bench::suite_error& e) {
    check_refusal(e);
  }
  return 0;
}
