#pragma once
// The catalogue of what this build registers (ops, axes, variants, tunings, what is missing and
// why), as Markdown: `kcnn-bench --catalogue`, committed as docs/catalogue.md and checked by a
// test so that the documentation cannot drift from the registry.
#include "cases/registry.hpp"

#include <string>

namespace kcnn::bench {

std::string catalogue_markdown(const registry& r);

}  // namespace kcnn::bench
