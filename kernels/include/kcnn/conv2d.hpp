#pragma once
// Every conv2d variant and the entry point
//   kcnn::conv2d(exec, in, wt, bias, out, params, variant = variant::direct_coalesced{}).
#include <kcnn/conv2d/entry.hpp>
#include <kcnn/conv2d/direct_constant.hpp>
#include <kcnn/conv2d/direct_global.hpp>
#include <kcnn/conv2d/direct_regtile.hpp>
#include <kcnn/conv2d/direct_tiled_scratch.hpp>
#include <kcnn/conv2d/direct_vector.hpp>
#include <kcnn/conv2d/gemm_pointwise.hpp>
#include <kcnn/conv2d/implicit_gemm.hpp>
#include <kcnn/conv2d/im2col_gemm.hpp>
