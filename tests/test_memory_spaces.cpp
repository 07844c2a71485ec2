// The memory-space axis on this build: registration per space, the constant-memory capacity
// rule, scratch sizing from the queried limit, the two constant-memory thread mappings, and
// the transfer study's rows.
#include "cases/memory_spaces.hpp"
#include "../benchmarks/studies/oversubscription.hpp"
#include "cases/registry.hpp"

#include <kcnn/batchnorm.hpp>
#include <kcnn/conv2d/direct_constant.hpp>
#include <kcnn/conv2d/direct_tiled_scratch.hpp>
#include <kcnn/pool.hpp>

#include <gtest/gtest.h>

#include <set>

using namespace kcnn;
using namespace kcnn::bench;

namespace {
std::set<std::string> ops_with_space(space_axis space) {
  std::set<std::string> ops;
  for (const auto& v : registry::instance().variants())
    if (v.space == space && v.origin() != origin::fault) ops.insert(v.op);
  return ops;
}
layer_spec spec(const std::string& op, int n, int c, int h, int w, int k = 0, int r = 0, int s = 0,
                int stride = 1, int pad = 0, int groups = 1) {
  layer_spec l;
  l.network = "t";
  l.layer = op;
  l.op = op;
  l.n = n; l.c = c; l.h = h; l.w = w; l.k = k; l.r = r; l.s = s;
  l.stride = stride; l.pad = pad; l.groups = groups;
  l.out = registry::instance().find_op(op)->output_shape(l);
  return l;
}
}  // namespace

TEST(MemorySpaces, ReadonlyForEveryOpThatReadsAnInput) {
  const auto ro = ops_with_space(space_axis::readonly);
  for (const char* op : {"conv2d", "fc", "pool_max", "pool_avg", "relu", "leaky_relu", "sigmoid", "tanh",
                         "elu", "lrn", "batchnorm", "softmax", "add", "concat", "transform"})
    EXPECT_TRUE(ro.count(op)) << op;
}

TEST(MemorySpaces, ScratchWhereDataIsReusedAndConstantWhereThereAreWeights) {
  EXPECT_EQ(ops_with_space(space_axis::scratch),
            (std::set<std::string>{"conv2d", "fc", "pool_max", "pool_avg", "softmax", "transform"}));
  EXPECT_EQ(ops_with_space(space_axis::constant), (std::set<std::string>{"conv2d", "fc", "batchnorm"}));
  // The others are explained, not silently missing.
  std::string notes;
  for (const auto& [what, why] : registry::instance().unavailable()) notes += what + ": " + why + "\n";
  EXPECT_NE(notes.find("relu/*/scratch"), std::string::npos);
  EXPECT_NE(notes.find("lrn/*/scratch"), std::string::npos);
  EXPECT_NE(notes.find("batchnorm/*/scratch"), std::string::npos);
  // The ops without constant memory are read off the registrations, not listed by hand.
  std::string constant_note;
  for (const auto& [what, why] : registry::instance().unavailable())
    if (what.rfind("memory space constant for ", 0) == 0) constant_note = what;
  for (const char* op : {"relu", "pool_max", "softmax", "transform", "concat"})
    EXPECT_NE(constant_note.find(op), std::string::npos) << op << " in '" << constant_note << "'";
  for (const char* op : {"conv2d", "batchnorm"})
    EXPECT_EQ(constant_note.find(op), std::string::npos) << op << " in '" << constant_note << "'";
}

TEST(MemorySpaces, CudaOnlySpacesExistExactlyOnCudaBuilds) {
  int cuda_spaces = 0;
  for (space_axis s : all_values<space_axis>()) {
    if (!cuda_only(s)) continue;
    ++cuda_spaces;
    EXPECT_EQ(!ops_with_space(s).empty(), have_cuda_spaces()) << name(s);
    if (!have_cuda_spaces()) {
      bool explained = false;
      for (const auto& [what, why] : registry::instance().unavailable())
        explained |= what == std::string("memory space ") + name(s) && why.find("CUDA") != std::string::npos;
      EXPECT_TRUE(explained) << name(s);
    }
  }
  EXPECT_EQ(cuda_spaces, 4);  // uvm_cold, uvm_prefetch, uvm_advise, pinned
}

TEST(MemorySpaces, ConstantCapacityRule) {
  using filter = constant_filter<constant_filter_capacity>;
  conv2d_params p{1, 16, 8, 8, 32, 3, 3, 1, 1, 1};  // 32*16*9 + 32 = 4640 floats
  EXPECT_TRUE(filter::fits(p));
  p.k = 53;  // 53*16*9 + 53 = 7685 > 7680
  EXPECT_FALSE(filter::fits(p));
  p.k = 52;  // 52*16*9 + 52 = 7540
  EXPECT_TRUE(filter::fits(p));
  // The registry refuses the layer with the reason, for every constant variant.
  const layer_spec big = spec("conv2d", 1, 16, 8, 8, 53, 3, 3, 1, 1, 1);
  int refused = 0;
  for (const auto& v : registry::instance().variants())
    if (v.op == "conv2d" && v.space == space_axis::constant) {
      const std::string why = v.unsupported(big);
      EXPECT_NE(why.find("exceed the constant capacity of 7680"), std::string::npos) << why;
      ++refused;
    }
  EXPECT_EQ(refused, 6);  // 3 layouts x (warp_uniform, warp_divergent)
  // A functor carrying the filter stays under CUDA's 32 KiB constant-launch limit.
  EXPECT_LT(sizeof(filter), 32768u - 512u);
}

TEST(MemorySpaces, BatchnormConstantCapacityRule) {
  using folded = batchnorm_folded<batchnorm_constant_capacity>;
  EXPECT_LT(sizeof(folded), 32768u - 512u);
  EXPECT_TRUE(folded::fits(batchnorm_params{1, 3840, 1, 1}));
  EXPECT_FALSE(folded::fits(batchnorm_params{1, 3841, 1, 1}));
  int refused = 0, accepted = 0;
  for (const auto& v : registry::instance().variants())
    if (v.op == "batchnorm" && v.space == space_axis::constant) {
      EXPECT_EQ(v.unsupported(spec("batchnorm", 1, 2048, 7, 7)), "");  // ResNet-50's widest
      accepted += v.unsupported(spec("batchnorm", 1, 2048, 7, 7)).empty();
      const std::string why = v.unsupported(spec("batchnorm", 1, 4096, 2, 2));
      EXPECT_NE(why.find("exceed the constant capacity of 3840"), std::string::npos) << why;
      ++refused;
    }
  EXPECT_EQ(refused, 3);
  EXPECT_EQ(accepted, 3);
}

TEST(MemorySpaces, ConstantMappingsPutOneOrManyFiltersOnAWarp) {
  // uniform: k fixed along consecutive threads; divergent: k fastest.
  EXPECT_TRUE((std::is_same_v<warp_uniform_order<layout::nchw>, layout::nchw>));
  EXPECT_TRUE((std::is_same_v<warp_uniform_order<layout::chwn>, layout::chwn>));
  EXPECT_TRUE((std::is_same_v<warp_uniform_order<layout::nhwc>, layout::nchw>));
  const dims4 d{2, 8, 3, 3};
  int n, k, h, w, k_next;
  warp_uniform_order<layout::nhwc>::storage_coords(0, d, n, k, h, w);
  warp_uniform_order<layout::nhwc>::storage_coords(1, d, n, k_next, h, w);
  EXPECT_EQ(k, k_next);
  warp_divergent_order::storage_coords(0, d, n, k, h, w);
  warp_divergent_order::storage_coords(1, d, n, k_next, h, w);
  EXPECT_EQ(k + 1, k_next);
}

TEST(MemorySpaces, ScratchTilesRespectTheQueriedLimit) {
  using exec = Kokkos::DefaultExecutionSpace;
  const std::size_t limit = scratch_limit<exec>(0);
  EXPECT_GT(limit, 1024u);
  const conv2d_params vgg{1, 128, 56, 56, 256, 3, 3, 1, 1, 1}, alex1{1, 3, 227, 227, 96, 11, 11, 4, 0, 1};
  for (std::size_t budget : {limit, std::size_t(16384), std::size_t(4096)}) {
    for (const auto& p : {vgg, alex1}) {
      const auto a = choose_conv2d_tile<layout::nchw>(p, budget);
      const auto b = choose_conv2d_tile<layout::chwn>(p, budget);
      for (const auto& t : {a, b}) {
        if (t.cc == 0) continue;
        EXPECT_LE(t.bytes(), budget) << t.describe();
        EXPECT_LE(t.cc, p.c_per_group());
      }
    }
  }
  // 11x11 windows at stride 4 cannot tile in 512 bytes: the variant is then not registered.
  EXPECT_EQ(choose_conv2d_tile<layout::nchw>(alex1, 512).cc, 0);
  pool_params pp;
  pp.n = 8; pp.c = 96; pp.h = 55; pp.w = 55; pp.r = 3; pp.s = 3; pp.stride = 2; pp.ceil_mode = true;
  const dims4 t = pool_tile<layout::nhwc>(pp, limit);
  EXPECT_GT(t.size(), 0u);
  EXPECT_LE(std::size_t(t.n) * t.c * ((t.h - 1) * 2 + 3) * ((t.w - 1) * 2 + 3) * 4, limit);
}

TEST(MemorySpaces, TransferRowsCopyExactly) {
  const layer_spec l = spec("transfer", 1, 1, 3, 1000);
  const double buffer = 4.0 * 3000;
  // The byte convention: a copy within one memory counts read + write (STREAM, BabelStream); a
  // copy over the link counts the buffer once; k concurrent copies count k buffers.
  auto expected_bytes = [&](const variant_info& v) {
    const std::string name = v.variant->name;
    if (name == "h2h" || name == "d2d") return 2 * buffer;
    if (name == "h2d" || name == "d2h") return buffer;
    if (name == "h2d_concurrent") return buffer * std::stoi(v.tuning.name.substr(v.tuning.name.find('_') + 1));
    ADD_FAILURE() << "no byte convention for transfer variant " << name;
    return 0.0;
  };
  int ran = 0;
  for (const auto& v : registry::instance().variants()) {
    if (v.op != "transfer") continue;
    auto c = v.make(l, case_settings{});
    c->setup(5);
    c->run();
    Kokkos::fence();
    const auto cmp = c->validate();
    EXPECT_TRUE(cmp.passed) << v.variant_name() << ": " << cmp.message;
    EXPECT_EQ(cmp.rel_l2, 0.0);
    EXPECT_EQ(c->cost().bytes, expected_bytes(v)) << v.variant_name() << " " << v.tuning.name;
    ++ran;
  }
  // Host builds: h2h; CUDA builds add h2d and d2h (pageable, pinned), d2d and h2d_concurrent x 3.
  EXPECT_EQ(ran, have_cuda_spaces() ? 9 : 1);
}

TEST(MemorySpaces, OversubscriptionStudyIsSizedFromFreeMemory) {
  const double gib = double(1 << 30), mib = double(1 << 20);
  // 80 GiB free, a quarter left to the chain but capped at 4 GiB, 1.5x oversubscribed, 24.5 MiB
  // activations: 6 GiB / 24.5 MiB = 250.8 -> 251 activations, 250 layers.
  const auto p = plan_oversubscription(80 * gib, 0.25, 4 * gib, 1.5, 24.5 * mib);
  EXPECT_EQ(p.budget_bytes, 4 * gib);
  EXPECT_EQ(p.ballast_bytes, 76 * gib);
  EXPECT_EQ(p.layers, 250);
  EXPECT_GE(p.total_bytes(), 1.5 * p.budget_bytes);
  EXPECT_LE(p.total_bytes(), 80 * gib);  // managed memory never exceeds what is free
  // Without the cap the budget is the fraction of free memory.
  EXPECT_EQ(plan_oversubscription(16 * gib, 0.25, 0, 2.0, 64 * mib).budget_bytes, 4 * gib);
  // Refusals name the field: more managed memory than the device has, a chain too short.
  auto why = [](auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(why([&] { plan_oversubscription(8 * gib, 0.5, 0, 3.0, mib); }).rfind("ratio:", 0), 0u);
  EXPECT_EQ(why([&] { plan_oversubscription(8 * gib, 0.5, 0, 1.5, 3 * gib); }).rfind("n:", 0), 0u);
  EXPECT_EQ(why([&] { plan_oversubscription(8 * gib, 1.5, 0, 1.5, mib); }).rfind("budget:", 0), 0u);
  // The study is a CUDA-only op; host builds say why.
  bool explained = false;
  for (const auto& [what, w] : registry::instance().unavailable())
    explained |= what.rfind("uvm_oversubscription", 0) == 0;
  EXPECT_EQ(explained, !have_cuda_spaces());
}

TEST(MemorySpaces, EveryConstantConvMappingHasAGlobalTwinWithItsThreadOrder) {
  // The constant-cache effect is the constant row minus the global row of the same thread order
  // (the mappings also change which global loads coalesce), so each must have its twin, with
  // the same layout, tuning and pattern.
  std::set<std::string> constant, twins;
  for (const auto& v : registry::instance().variants()) {
    if (v.op != "conv2d" || v.tuning.name.rfind("warp_", 0) != 0) continue;
    const std::string id = std::string(name(v.layout)) + "/" + name(v.pattern) + "/" + v.tuning.name;
    if (v.space == space_axis::constant) constant.insert(id);
    if (v.space == space_axis::global && std::string(v.variant_name()) == "direct_in_order") twins.insert(id);
  }
  EXPECT_EQ(constant.size(), 6u);  // 2 mappings x 3 layouts
  EXPECT_EQ(constant, twins);
}
