// The kernels' registers per thread (gpu_model.hpp, register_table): the CUDA build's ptxas report,
// as scripts/model-registers writes it to registers.csv beside this file. Read with the suite
// loader's CSV reader, every field checked, so that a bad line is refused with its file, line and
// field rather than modelled.
#include "gpu_model.hpp"

#include <csv.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#ifndef KCNN_MODEL_REGISTERS_FILE
#define KCNN_MODEL_REGISTERS_FILE "registers.csv"
#endif

namespace kcnn::model {

namespace {

using reader_t = io::CSVReader<3, io::trim_chars<' ', '\t', '\r'>, io::double_quote_escape<',', '"'>,
                               io::throw_on_overflow, io::single_and_empty_line_comment<'#'>>;

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

}  // namespace

std::string kernel_key(const char* name) {
  if (name == nullptr) return {};
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  std::string s = status == 0 && demangled ? demangled.get() : name;
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  // Memory spaces before execution spaces: Kokkos::Cuda is a prefix of Kokkos::CudaSpace. A memory
  // space after another template argument is dropped, so that View<float*, CudaSpace> and a View
  // whose space is the default, View<float*>, are one key (the same kernel on either side).
  for (const char* m : {"Kokkos::CudaUVMSpace", "Kokkos::CudaHostPinnedSpace", "Kokkos::CudaSpace", "Kokkos::HostSpace"}) {
    replace_all(s, std::string(",") + m, "");
    replace_all(s, m, "MEM");
  }
  for (const char* e : {"Kokkos::Cuda", "Kokkos::Serial", "Kokkos::OpenMP"}) replace_all(s, e, "EXEC");
  return s;
}

register_table register_table::load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::invalid_argument(path + ": cannot open the registers file");
  std::ostringstream buffer;
  buffer << file.rdbuf();
  const std::string text = buffer.str();
  register_table t;
  t.file_ = path;
  reader_t in(path, text.data(), text.data() + text.size());
  const auto at = [&](long line) { return path + ":" + std::to_string(line); };
  try {
    in.read_header(io::ignore_no_column, "kernel", "registers", "source");
  } catch (const io::error::base& e) {
    throw std::invalid_argument(at(in.get_file_line()) + ": the header must name kernel, registers and source (" +
                                e.what() + ")");
  }
  try {
    std::string kernel, regs, source;
    while (in.read_row(kernel, regs, source)) {
      const long line = long(in.get_file_line());
      if (kernel.empty()) throw std::invalid_argument(at(line) + ": field 'kernel' is empty");
      int r = 0;
      try {
        std::size_t used = 0;
        r = std::stoi(regs, &used);
        if (used != regs.size() || r <= 0 || r > 255) throw std::invalid_argument("");
      } catch (const std::exception&) {
        throw std::invalid_argument(at(line) + ": field 'registers' must be an integer from 1 to 255, got '" + regs + "'");
      }
      if (t.registers(kernel) != 0 && t.registers(kernel) != r)
        throw std::invalid_argument(at(line) + ": field 'kernel': '" + kernel + "' is given twice, with different registers");
      t.add(kernel, r);
    }
  } catch (const io::error::base& e) {
    throw std::invalid_argument(at(in.get_file_line()) + ": " + e.what());
  }
  return t;
}

void register_table::add(const std::string& kernel, int registers) { regs_[kernel] = registers; }

int register_table::registers(const std::string& kernel) const {
  const auto it = regs_.find(kernel);
  return it == regs_.end() ? 0 : it->second;
}

std::string default_registers_file() { return KCNN_MODEL_REGISTERS_FILE; }

}  // namespace kcnn::model
