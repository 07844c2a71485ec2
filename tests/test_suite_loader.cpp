// The suite loader accepts the shipped suites and rejects malformed files with file, line and
// field named.
#include "suites/suite.hpp"

#include "test_tmp.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

using namespace kcnn::bench;
namespace fs = std::filesystem;

namespace {
const std::string header = "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups\n";

std::string write_suite(const std::string& name, const std::string& body) {
  const fs::path dir = kcnn_test_tmp() / "kcnn_loader_tests";
  fs::create_directories(dir);
  const fs::path p = dir / (name + ".csv");
  std::ofstream(p) << body;
  return p.string();
}

// Loads and returns the error message ("" if it loaded).
std::string error_of(const std::string& name, const std::string& body) {
  try {
    load_suite(write_suite(name, body));
  } catch (const suite_error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(SuiteLoader, AcceptsSmokeAndComputesShapes) {
  const auto s = load_suite(std::string(KCNN_SOURCE_DIR) + "/suites/smoke.csv");
  EXPECT_EQ(s.name, "smoke");
  ASSERT_GE(s.layers.size(), 4u);
  bool stride2 = false, padded = false, grouped = false, depthwise = false, fc = false;
  std::set<std::string> ops;
  for (const auto& l : s.layers) {
    EXPECT_GT(l.out.size(), 0u);
    if (l.op == "conv2d") {
      EXPECT_EQ(l.out.h, (l.h + 2 * l.pad - l.r) / l.stride + 1);
      EXPECT_EQ(l.out.w, (l.w + 2 * l.pad - l.s) / l.stride + 1);
      stride2 |= l.stride == 2;
      padded |= l.pad > 0;
      grouped |= l.groups == 2;
      depthwise |= l.groups == l.c && l.c == l.k && l.c > 1;
    } else if (l.op == "fc") {
      EXPECT_EQ(l.out, (kcnn::dims4{l.n, l.k, 1, 1}));
      fc = true;
    } else {
      ops.insert(l.op);
    }
  }
  EXPECT_TRUE(stride2 && padded && grouped && depthwise && fc);
  for (const char* op : {"pool_max", "pool_avg", "lrn", "batchnorm", "add", "relu", "leaky_relu",
                         "sigmoid", "tanh", "elu", "softmax", "concat", "transform"})
    EXPECT_TRUE(ops.count(op)) << op;
}

TEST(SuiteLoader, CommentsRepeatAndOptionalColumns) {
  const auto p = write_suite("ok", "# a comment\n" +
                                       std::string("network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,repeat,params\n") +
                                       "net,a,conv2d,2,3,9,9,4,3,3,2,0,1,3,\n\n"
                                       "# another\nnet,b,lrn,2,4,4,4,,,,,,,,alpha=1 beta=2\n");
  const auto s = load_suite(p);
  ASSERT_EQ(s.layers.size(), 2u);
  EXPECT_EQ(s.layers[0].repeat, 3);
  EXPECT_EQ(s.layers[0].out.h, 4);
  EXPECT_TRUE(s.layers[0].params.empty());
  EXPECT_EQ(s.layers[1].params.at("beta"), "2");
  EXPECT_EQ(s.layers[0].line, 3);
  EXPECT_EQ(s.layers[1].repeat, 1);
  EXPECT_EQ(s.layers[1].line, 6);
}

TEST(SuiteLoader, RejectsMalformedRowsNamingFileLineAndField) {
  struct bad { std::string name, body, expect; };
  const std::vector<bad> cases = {
      {"missing_col", "network,layer,op,n,c,h,w,k,r,s,stride,pad\nx,a,conv2d,1,1,4,4,1,1,1,1,0\n",
       "missing_col.csv:1: field 'groups': required column is missing"},
      {"unknown_col", header.substr(0, header.size() - 1) + ",strid\nx,a,conv2d,1,1,4,4,1,1,1,1,0,1,1\n",
       "unknown_col.csv:1: field 'strid': unknown column"},
      {"non_numeric", header + "x,a,conv2d,1,1,4,4,1,1,1,1,0,1\nx,b,conv2d,1,abc,4,4,1,1,1,1,0,1\n",
       "non_numeric.csv:3: field 'c': expected an integer, got 'abc'"},
      {"negative", header + "x,a,conv2d,1,1,-4,4,1,1,1,1,0,1\n",
       "negative.csv:2: field 'h': must be >= 0, got -4"},
      {"zero_dim", header + "x,a,conv2d,0,1,4,4,1,1,1,1,0,1\n", "zero_dim.csv:2: field 'n': must be > 0"},
      {"zero_stride", header + "x,a,conv2d,1,1,4,4,1,1,1,0,0,1\n",
       "zero_stride.csv:2: field 'stride': must be > 0"},
      {"big_kernel", header + "x,a,conv2d,1,1,4,4,1,7,3,1,1,1\n",
       "big_kernel.csv:2: field 'r': filter height 7 exceeds padded input height 6"},
      {"groups_c", header + "x,a,conv2d,1,3,4,4,4,1,1,1,0,2\n",
       "groups_c.csv:2: field 'groups': 2 does not divide c = 3"},
      {"groups_k", header + "x,a,conv2d,1,4,4,4,3,1,1,1,0,2\n",
       "groups_k.csv:2: field 'groups': 2 does not divide k = 3"},
      {"unknown_op", header + "x,a,conv3d,1,1,4,4,1,1,1,1,0,1\n",
       "unknown_op.csv:2: field 'op': unknown op 'conv3d'"},
      {"duplicate", header + "x,a,conv2d,1,1,4,4,1,1,1,1,0,1\nx,a,conv2d,1,1,4,4,1,1,1,1,0,1\n",
       "duplicate.csv:3: field 'layer': duplicate layer name 'a'"},
      {"bad_rounding", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,rounding\nx,a,conv2d,1,1,4,4,1,1,1,1,0,1,up\n",
       "bad_rounding.csv:2: field 'rounding': expected floor or ceil, got 'up'"},
      {"bad_name", header + "x,a b,conv2d,1,1,4,4,1,1,1,1,0,1\n", "bad_name.csv:2: field 'layer'"},
      {"no_layers", header, "no_layers.csv: no layers"},
      {"bad_param", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,repeat,rounding,params\nx,a,lrn,1,8,4,4,,,,,,,1,,size=abc\n",
       "bad_param.csv:2: field 'params': 'size' is not an integer: 'abc'"},
      {"fractional", header + "x,a,conv2d,1,1.5,4,4,1,1,1,1,0,1\n", "fractional.csv:2: field 'c': expected an integer, got '1.5'"},
      {"overflow", header + "x,a,conv2d,1,99999999999,4,4,1,1,1,1,0,1\n", "overflow.csv:2: field 'c': expected an integer"},
      {"negative_pad", header + "x,a,conv2d,1,1,4,4,1,1,1,1,-1,1\n", "negative_pad.csv:2: field 'pad': must be >= 0, got -1"},
      // Found by the fuzzer: zero groups on an op that has none loaded.
      {"pool_groups0", header + "x,a,pool_max,1,1,4,4,,2,2,2,0,0\n", "pool_groups0.csv:2: field 'groups': must be > 0, got 0"},
      {"relu_stride0", header + "x,a,relu,1,1,4,4,,,,0,,\n", "relu_stride0.csv:2: field 'stride': must be > 0, got 0"},
      // Values whose arithmetic would overflow an int, and non-integer integer parameters.
      {"huge_pad", header + "x,a,conv2d,1,1,4,4,1,3,3,1,2000000000,1\n",
       "huge_pad.csv:2: field 'pad': the padded input (4 + 2 x 2000000000) plus a stride exceeds 2^31 - 1"},
      {"huge_pool", header + "x,a,pool_max,1,1,1073741824,1073741824,,1073741824,1073741824,1,1073741823,\n",
       "huge_pool.csv:2: field 'pad': the padded input (1073741824 + 2 x 1073741823) plus a stride exceeds 2^31 - 1"},
      {"lrn_size_fraction", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,params\nx,a,lrn,1,8,4,4,,,,,,,size=3.5\n",
       "lrn_size_fraction.csv:2: field 'params': 'size' is not an integer: '3.5'"},
      {"lrn_size_huge", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,params\nx,a,lrn,1,8,4,4,,,,,,,size=1e300\n",
       "lrn_size_huge.csv:2: field 'params': 'size' is not an integer: '1e300'"},
      {"concat_overflow", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,params\nx,a,concat,1,8,4,4,,,,,,,parts=2147483647+2147483647\n",
       "concat_overflow.csv:2: field 'params': parts: channels add up to 4294967294, not c = 8"},
      {"concat_junk", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,params\nx,a,concat,1,8,4,4,,,,,,,parts=4x+4\n",
       "concat_junk.csv:2: field 'params': parts: expected positive channel counts joined by '+', got '4x+4'"},
      {"pool_window", header + "x,a,pool_max,1,1,4,4,,7,7,1,0,\n", "pool_window.csv:2: field 'r': window height 7 exceeds padded input height 4"},
      // params: only the keys the op takes, each once (a misspelling, another op's key, a key
      // for a feature the op does not have, a repeat).
      {"param_misspelt", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,params\nx,a,lrn,1,8,4,4,,,,,,,sise=3 alpah=2\n",
       "param_misspelt.csv:2: field 'params': unknown key 'sise'; lrn takes: size, alpha, beta, k"},
      {"param_other_op", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,params\nx,a,relu,1,8,4,4,,,,,,,alpha=0.1\n",
       "param_other_op.csv:2: field 'params': 'alpha' does not apply to relu (taken by elu, leaky_relu, lrn); relu takes no params"},
      {"param_dilation", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,params\nx,a,conv2d,1,8,38,38,8,3,3,1,6,,dilation=6\n",
       "param_dilation.csv:2: field 'params': unknown key 'dilation'; conv2d takes no params"},
      {"param_pad_r", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,params\nx,a,conv2d,1,8,8,8,8,3,3,1,1,,pad_r=1\n",
       "param_pad_r.csv:2: field 'params': unknown key 'pad_r'; conv2d takes no params"},
      {"param_twice", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,params\nx,a,lrn,1,8,4,4,,,,,,,size=3 size=5\n",
       "param_twice.csv:2: field 'params': 'size' is given twice"},
      {"param_pool", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,params\nx,a,pool_avg,1,8,4,4,,2,2,2,0,,count_include_pad=1\n",
       "param_pool.csv:2: field 'params': unknown key 'count_include_pad'; pool_avg takes no params"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(c.name, c.body);
    EXPECT_NE(e.find(c.expect), std::string::npos) << c.name << ": got '" << e << "'";
  }
}

TEST(SuiteLoader, GeometryColumnsDefaultToStrideAndPadAndAreCheckedPerOp) {
  const std::string h = "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,stride_h,stride_w,pad_h,pad_w,pad_h_end,"
                        "pad_w_end,dilation_h,dilation_w\n";
  const auto su = load_suite(write_suite("geometry", h +
      "x,plain,conv2d,1,4,17,17,8,3,3,2,1,1,,,,,,,,\n"
      "x,i1x7,conv2d,1,4,17,17,8,1,7,1,0,1,,,,3,,,,\n"          // Inception v3: pad 0 x 3
      "x,same,conv2d,1,4,16,16,8,3,3,2,0,1,,,,,1,1,,\n"         // TensorFlow SAME, stride 2
      "x,fc6,conv2d,1,4,19,19,8,3,3,1,6,1,,,,,,,6,6\n"          // SSD fc6
      "x,axis,conv2d,1,4,17,16,8,3,3,1,1,1,2,,,,,,,\n"          // stride 2 along h only
      "x,pool,pool_max,1,4,16,16,0,3,3,2,0,1,,,,,1,1,,\n"
      "x,relu,relu,1,4,16,16,0,0,0,1,0,1,,,,,,,,\n"));
  ASSERT_EQ(su.layers.size(), 7u);
  const auto& plain = su.layers[0];
  EXPECT_EQ(plain.row_stride(), 2);
  EXPECT_EQ(plain.pad_bottom(), 1);
  EXPECT_EQ(plain.dilation_w, 1);
  EXPECT_EQ(geometry_tag(plain), "");
  EXPECT_EQ(plain.out, (kcnn::dims4{1, 8, 9, 9}));
  EXPECT_EQ(su.layers[1].out, (kcnn::dims4{1, 8, 17, 17}));
  EXPECT_EQ(geometry_tag(su.layers[1]), "p0x3+0x3");
  EXPECT_EQ(su.layers[2].out, (kcnn::dims4{1, 8, 8, 8}));
  EXPECT_EQ(geometry_tag(su.layers[2]), "p0x0+1x1");
  EXPECT_EQ(su.layers[3].out, (kcnn::dims4{1, 8, 19, 19}));
  EXPECT_EQ(geometry_tag(su.layers[3]), "d6x6");
  EXPECT_EQ(su.layers[4].out, (kcnn::dims4{1, 8, 9, 16}));
  EXPECT_EQ(geometry_tag(su.layers[4]), "s2x1");
  EXPECT_EQ(su.layers[5].out, (kcnn::dims4{1, 4, 8, 8}));
  // The geometry is part of the layer's identity: a layer with other pads shares no reference.
  EXPECT_NE(reference_key(su.layers[2], 1), reference_key(su.layers[0], 1));
  auto undilated = su.layers[3];
  undilated.dilation_h = undilated.dilation_w = 1;
  EXPECT_NE(reference_key(undilated, 1), reference_key(su.layers[3], 1));

  struct bad { std::string name, row, expect; };
  const std::vector<bad> cases = {
      {"geo_relu", "x,a,relu,1,4,16,16,0,0,0,1,0,1,,,,,,,2,\n",
       "geo_relu.csv:2: field 'dilation_h': relu takes no dilation_h (taken by conv2d)"},
      {"geo_pool_dil", "x,a,pool_max,1,4,16,16,0,3,3,1,0,1,,,,,,,2,2\n",
       "geo_pool_dil.csv:2: field 'dilation_h': pool_max takes no dilation_h (taken by conv2d)"},
      {"geo_neg", "x,a,conv2d,1,4,16,16,8,3,3,1,0,1,,,-1,,,,,\n",
       "geo_neg.csv:2: field 'pad_h': must be >= 0, got -1"},
      {"geo_zero", "x,a,conv2d,1,4,16,16,8,3,3,1,0,1,,0,,,,,,\n",
       "geo_zero.csv:2: field 'stride_w': must be > 0, got 0"},
      {"geo_text", "x,a,conv2d,1,4,16,16,8,3,3,1,0,1,,,,,,,two,\n",
       "geo_text.csv:2: field 'dilation_h': expected an integer, got 'two'"},
      {"geo_wide", "x,a,conv2d,1,4,16,16,8,3,3,1,0,1,,,,,,,9,\n",
       "geo_wide.csv:2: field 'dilation_h': filter height 3 dilated by 9 exceeds padded input height 16"},
      {"geo_pool_pad", "x,a,pool_max,1,4,16,16,0,3,3,2,0,1,,,,,3,,,\n",
       "geo_pool_pad.csv:2: field 'pad_h_end': must be smaller than the window (3), got 3"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(c.name, h + c.row);
    const auto at = e.find(c.name + ".csv");
    ASSERT_NE(at, std::string::npos) << c.name << ": " << e;
    EXPECT_EQ(e.substr(at), c.expect) << c.name;
  }
}

TEST(SuiteLoader, EveryCommittedSuiteLoads) {
  // A suite file that stopped loading (a renamed op, a key no op takes any more) fails here, not
  // in a user's run.
  int files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(KCNN_SOURCE_DIR) / "suites")) {
    if (e.path().extension() != ".csv") continue;
    ++files;
    try {
      EXPECT_FALSE(load_suite(e.path().string()).layers.empty()) << e.path();
    } catch (const suite_error& err) {
      ADD_FAILURE() << e.path() << ": " << err.what();
    }
  }
  EXPECT_GE(files, 20);
}

TEST(SuiteLoader, RowsOfTheWrongWidthNameTheFirstMissingColumn) {
  EXPECT_NE(error_of("short", header + "x,a,conv2d,1,1,4,4\n")
                .find("short.csv:2: field 'k': missing value: the row has 7 fields, the header names 13"),
            std::string::npos);
  // A comma inside double quotes does not split a field.
  EXPECT_NE(error_of("short_quoted", header + "x,a,conv2d,1,1,4,4,1,1,1,1,\"0,1\"\n")
                .find("short_quoted.csv:2: field 'groups': missing value: the row has 12 fields"),
            std::string::npos);
  EXPECT_NE(error_of("long", header + "x,a,conv2d,1,1,4,4,1,1,1,1,0,1\nx,b,conv2d,1,1,4,4,1,1,1,1,0,1,9\n")
                .find("long.csv:3: field 'row': the row has 14 fields, the header names 13"),
            std::string::npos);
  EXPECT_NE(error_of("unclosed", header + "x,a,conv2d,1,1,4,4,1,1,1,1,0,\"1\n")
                .find("unclosed.csv:2: field 'row': a double-quoted value is not closed"),
            std::string::npos);
}

TEST(SuiteLoader, ParsesTextAsTheFileWouldBe) {
  const suite su = parse_suite("in_memory.csv", header + "x,a,conv2d,2,3,8,8,4,3,3,1,1,1\n");
  ASSERT_EQ(su.layers.size(), 1u);
  EXPECT_EQ(su.name, "in_memory");
  EXPECT_EQ(su.layers[0].line, 2);
  EXPECT_EQ(su.layers[0].out, (kcnn::dims4{2, 4, 8, 8}));
  EXPECT_THROW(parse_suite("empty.csv", ""), suite_error);
  // A binary file's bytes are shown escaped in the message.
  try {
    parse_suite("nul.csv", std::string("net\0work,lay\xff" "er\n", 16));
    ADD_FAILURE() << "a binary header loaded";
  } catch (const suite_error& e) {
    EXPECT_EQ(std::string(e.what()), "nul.csv:1: field 'net\\x00work': unknown column");
  }
}

TEST(SuiteLoader, ResolvesNamesAndRejectsUnknownOnes) {
  EXPECT_NE(resolve_suite("smoke").find("smoke.csv"), std::string::npos);
  try {
    resolve_suite("no_such_suite");
    FAIL() << "expected suite_error";
  } catch (const suite_error& e) {
    EXPECT_NE(std::string(e.what()).find("smoke"), std::string::npos) << e.what();
  }
}

TEST(SuiteLoader, EveryNetworkSuiteChainsWithItsSourceAndRounding) {
  const std::map<std::string, std::pair<std::size_t, kcnn::dims4>> expect = {
      // layers, final output (batch as shipped)
      {"lenet", {8, {64, 10, 1, 1}}},          {"cifar10_quick", {12, {100, 10, 1, 1}}},
      {"alexnet", {21, {64, 1000, 1, 1}}},     {"zfnet", {19, {64, 1000, 1, 1}}},
      {"vgg16", {37, {64, 1000, 1, 1}}},       {"resnet50", {142, {64, 1000, 1, 1}}},
      {"mobilenet_v2", {152, {64, 1000, 1, 1}}}, {"inception_v3", {215, {64, 1000, 1, 1}}},
      {"efficientnet_b0", {143, {64, 1000, 1, 1}}}};
  const auto all = all_network_suites();
  std::set<std::string> names;
  for (const auto& su : all) {
    names.insert(su.name);
    ASSERT_TRUE(expect.count(su.name)) << su.name;
    EXPECT_EQ(su.layers.size(), expect.at(su.name).first) << su.name;
    EXPECT_EQ(su.layers.back().out, expect.at(su.name).second) << su.name;
    EXPECT_FALSE(su.source.empty()) << su.name;
    EXPECT_FALSE(su.rounding.empty()) << su.name;
    for (const auto& l : su.layers)
      if (l.op.rfind("pool_", 0) == 0) EXPECT_EQ(l.rounding, su.rounding) << su.name << "." << l.layer;
  }
  EXPECT_EQ(names.size(), expect.size());
  // Spot checks against science.md section 6.
  const auto find = [&](const std::string& net, const std::string& layer) {
    for (const auto& su : all)
      for (const auto& l : su.layers)
        if (su.name == net && l.layer == layer) return l;
    ADD_FAILURE() << net << "." << layer;
    return layer_spec{};
  };
  EXPECT_EQ(find("cifar10_quick", "pool1").out.h, 16);  // ceil (floor: 15)
  EXPECT_EQ(find("alexnet", "pool5").out, (kcnn::dims4{64, 256, 6, 6}));
  EXPECT_EQ(find("zfnet", "conv1").out.h, 110);
  EXPECT_EQ(find("zfnet", "pool1").out.h, 55);
  EXPECT_EQ(find("resnet50", "layer4_2_relu").out, (kcnn::dims4{64, 2048, 7, 7}));
  EXPECT_EQ(find("resnet50", "layer2_0_conv2").stride, 2);  // v1.5: stride on the 3x3
  EXPECT_EQ(find("resnet50", "layer2_0_add").inputs,
            (std::vector<std::string>{"layer2_0_bn3", "layer2_0_downsample_bn"}));
  EXPECT_EQ(find("mobilenet_v2", "block2_dw").groups, 96);
  // Inception v3: 1 x 7 padded 0 x 3 keeps 17 x 17; the last block ends at 2048 x 8 x 8.
  EXPECT_EQ(find("inception_v3", "Mixed_6b_branch7x7_2").out, (kcnn::dims4{64, 128, 17, 17}));
  EXPECT_EQ(find("inception_v3", "Mixed_6b_branch7x7_2").pad_left(), 3);
  EXPECT_EQ(find("inception_v3", "Mixed_6b_branch7x7_2").pad_top(), 0);
  EXPECT_EQ(find("inception_v3", "Mixed_7c_concat").out, (kcnn::dims4{64, 2048, 8, 8}));
  EXPECT_EQ(find("inception_v3", "Mixed_6a_concat").out, (kcnn::dims4{64, 768, 17, 17}));
  // EfficientNet-B0: "SAME" stride 2 pads after only; 5 x 5 / 2 on 56: 1 before, 2 after.
  EXPECT_EQ(find("efficientnet_b0", "stem").out, (kcnn::dims4{64, 32, 112, 112}));
  EXPECT_EQ(find("efficientnet_b0", "stem").pad_bottom(), 1);
  EXPECT_EQ(find("efficientnet_b0", "block4_dw").out, (kcnn::dims4{64, 144, 28, 28}));
  EXPECT_EQ(find("efficientnet_b0", "block4_dw").pad_top(), 1);
  EXPECT_EQ(find("efficientnet_b0", "block4_dw").pad_bottom(), 2);
  EXPECT_EQ(find("efficientnet_b0", "head_swish").out, (kcnn::dims4{64, 1280, 7, 7}));
  // The dilated layers: SSD's fc6 keeps 19 x 19 (29 x 29 undilated), the ASPP branches 33 x 33.
  const auto dilated = load_suite(resolve_suite("dilated"));
  for (const auto& l : dilated.layers) EXPECT_EQ(l.out.h, l.h) << l.layer;
  EXPECT_EQ(dilated.layers.front().dilation_h, 6);
  // --batch keeps the chain.
  auto vgg = load_suite(resolve_suite("vgg16"));
  set_batch(vgg, 3);
  EXPECT_EQ(vgg.layers.back().out, (kcnn::dims4{3, 1000, 1, 1}));
}

TEST(SuiteLoader, RejectsSuitesThatDoNotChainNamingTheLayer) {
  const std::string net = "#@ kind: network\n#@ source: test\n#@ rounding: floor\n"
                          "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,input\n";
  struct bad { std::string name, body, expect; };
  const std::vector<bad> cases = {
      {"chain_shape", net + "x,a,conv2d,1,3,8,8,4,3,3,1,1,,\nx,b,conv2d,1,4,7,7,4,3,3,1,1,,\n",
       "chain_shape.csv:6: field 'input': layer 'b' expects 1x4x7x7 from 'a', which produces 1x4x8x8"},
      {"chain_unknown", net + "x,a,conv2d,1,3,8,8,4,3,3,1,1,,\nx,b,relu,1,4,8,8,,,,,,,zz\n",
       "chain_unknown.csv:6: field 'input': layer 'b': 'zz' is not an earlier layer of network 'x'"},
      {"chain_later", net + "x,a,conv2d,1,3,8,8,4,3,3,1,1,,c\nx,c,relu,1,4,8,8,,,,,,,\n",
       "chain_later.csv:5: field 'input': layer 'a': 'c' is not an earlier layer"},
      {"chain_add_one", net + "x,a,conv2d,1,3,8,8,4,3,3,1,1,,\nx,b,add,1,4,8,8,,,,,,,a\n",
       "chain_add_one.csv:6: field 'input': layer 'b' (add) takes 2 input(s), 1 named"},
      {"chain_add_shape", net + "x,a,conv2d,1,3,8,8,4,3,3,1,1,,\nx,b,conv2d,1,4,8,8,4,3,3,2,1,,\nx,c,add,1,4,8,8,,,,,,,a b\n",
       "chain_add_shape.csv:7: field 'input': layer 'c' expects 1x4x8x8 from 'b', which produces 1x4x4x4"},
      {"chain_fc", net + "x,a,conv2d,1,3,8,8,4,3,3,1,1,,\nx,b,fc,1,4,4,4,10,,,,,,\n",
       "chain_fc.csv:6: field 'input': layer 'b' expects 1x4x4x4 from 'a'"},
      {"chain_two_nets", net + "x,a,conv2d,1,3,8,8,4,3,3,1,1,,\ny,b,relu,1,4,8,8,,,,,,,\n",
       "chain_two_nets.csv:6: field 'network': a network suite holds one network ('x')"},
      {"chain_no_source", "#@ kind: network\n#@ rounding: floor\nnetwork,layer,op,n,c,h,w,k,r,s,stride,pad,groups\nx,a,relu,1,4,8,8,,,,,,\n",
       "field '#@ source': a network suite names its source and its pooling rounding mode"},
      {"chain_meta", "#@ colour: blue\n" + header + "x,a,relu,1,4,8,8,,,,,,\n",
       "chain_meta.csv:1: field '#@ colour': unknown suite metadata"},
      {"chain_layers_input", "network,layer,op,n,c,h,w,k,r,s,stride,pad,groups,input\nx,a,relu,1,4,8,8,,,,,,,q\n",
       "chain_layers_input.csv:2: field 'input': inputs are named only in network suites"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(c.name, c.body);
    EXPECT_NE(e.find(c.expect), std::string::npos) << c.name << ": got '" << e << "'";
  }
}

TEST(SuiteLoader, FillSizesEachLayerToAStubbedDevice) {
  // relu on 2 x 3 x 5 x 7: one sample's input and output are 2 x 105 floats = 840 bytes.
  const suite su = parse_suite("fill.csv", header + "t,r,relu,2,3,5,7,,,,,,\nt,p,pool_max,100,3,5,7,,3,3,1,1,\n");
  const layer_spec& relu = su.layers[0];
  EXPECT_EQ(fill_batch(relu, 40000, 1e12, 64), 48);     // ceil(40000 / 840)
  EXPECT_EQ(fill_batch(relu, 4 << 20, 1e12, 64), 64);   // 4994 wanted: the batch cap
  EXPECT_EQ(fill_batch(relu, 40000, 10000, 64), 11);    // floor(10000 / 840): the memory cap
  EXPECT_EQ(fill_batch(relu, 1000, 1e12, 64), 2);       // never below the layer's own batch
  EXPECT_EQ(fill_batch(su.layers[1], 40000, 1e12, 64), 100);  // nor when its own is above the caps
  // A device of 10 KB cache (40 KB wanted) and 1 MB memory (250 KB cap): both layers resized,
  // output shapes recomputed.
  suite filled = su;
  fill_device(filled, 10000, 1e6);
  EXPECT_EQ(filled.layers[0].n, 48);
  EXPECT_EQ(filled.layers[0].out.n, 48);
  EXPECT_EQ(filled.layers[1].n, 100);
  // A network's layers keep one batch, so that they still chain: LeNet on a 1 MiB cache.
  suite net = load_suite(resolve_suite("lenet"));
  fill_device(net, 1 << 20, 64.0 * (1 << 30));
  for (const auto& l : net.layers) EXPECT_EQ(l.n, net.layers.front().n) << l.layer;
  EXPECT_GT(net.layers.front().n, 1);
  EXPECT_LE(net.layers.front().n, fill_max_batch);
}
