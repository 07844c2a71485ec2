#pragma once
// Host references are expensive (double accumulation on the host); every variant, layout and
// memory space of one layer shares one. The run owns the cache and hands it to its cases through
// case_settings::references. It keeps only the most recent entry: cases run layer by layer, so
// that is all that is ever reused, and memory stays bounded.
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kcnn::bench {

class reference_cache {
 public:
  // The reference stored under `key`, computed by compute() when it is not the one held.
  std::shared_ptr<const std::vector<double>> get(const std::string& key, const std::function<std::vector<double>()>& compute);

 private:
  std::string key_;
  std::shared_ptr<const std::vector<double>> last_;
};

}  // namespace kcnn::bench
