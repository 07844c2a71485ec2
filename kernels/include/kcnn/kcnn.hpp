#pragma once
// Umbrella header of kcnn::kernels.
#include <kcnn/compat.hpp>
#include <kcnn/conv2d/direct_global.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/fill.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/reference/conv2d.hpp>
#include <kcnn/tensor.hpp>
#include <kcnn/validate.hpp>
