#pragma once
// Host references are expensive (double accumulation, one core); all variants and layouts of
// the same layer share one. The cache keeps only the most recent entry: cases run layer by
// layer, so that is all that is ever reused, and memory stays bounded.
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kcnn::bench {

std::shared_ptr<const std::vector<double>> cached_reference(
    const std::string& key, const std::function<std::vector<double>()>& compute);

}  // namespace kcnn::bench
