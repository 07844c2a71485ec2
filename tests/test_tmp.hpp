#pragma once
// A scratch folder per test process (temp/kcnn_tests_<pid>), so that two builds' test runs
// (e.g. the sanitizer build beside the normal one) never share or remove each other's files.
// It is removed when the process exits.
#include <unistd.h>

#include <filesystem>
#include <string>

inline std::filesystem::path kcnn_test_tmp() {
  const auto d = std::filesystem::temp_directory_path() / ("kcnn_tests_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  struct remove_at_exit {
    std::filesystem::path p;
    ~remove_at_exit() {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
    }
  };
  static const remove_at_exit cleanup{d};
  return d;
}
