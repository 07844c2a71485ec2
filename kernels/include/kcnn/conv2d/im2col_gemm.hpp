#pragma once
// conv2d as explicit lowering + GEMM (Caffe's algorithm), with Kokkos Kernels' gemm.
//
// Per group g: col = im2col(in) of shape (C/g * R * S, N * P * Q); omat = W_g * col with W_g
// the group's filters as a (K/g, C/g * R * S) matrix; then out = omat + bias, scattered into the
// output layout. Weights are packed into matrix form once (prepare), outside the timed run.
// The workspace (col, omat and the packed weights) is what this algorithm costs in memory.
#include <kcnn/conv2d/entry.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/map.hpp>
#include <kcnn/tensor.hpp>

#include <kcnn/compat_blas.hpp>
#include <Kokkos_Core.hpp>

#include <memory>

namespace kcnn {

template <class Exec, class MemSpace = typename Exec::memory_space>
class conv2d_im2col_gemm {
 public:
  using matrix = Kokkos::View<float**, Kokkos::LayoutRight, MemSpace>;

  // Allocates the workspace and packs the weights (wt: (k, c/groups, r, s), any layout).
  template <class Wt>
  void prepare(const Exec& exec, const conv2d_params& p, const Wt& wt) {
    p_ = p;
    crs_ = p.c_per_group() * p.r * p.s;
    npq_ = p.n * p.p() * p.q();
    col_ = matrix(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcnn::im2col.col"), crs_, npq_);
    omat_ = matrix(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcnn::im2col.omat"),
                   p.k_per_group(), npq_);
    wmat_ = matrix(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcnn::im2col.wmat"), p.k, crs_);
    launch_range("kcnn::im2col_pack_weights", exec, std::size_t(p.k) * crs_,
                         pack<Wt>{wt, wmat_, p});
  }

  double workspace_bytes() const {
    return double(col_.span() + omat_.span() + wmat_.span()) * sizeof(float);
  }
  static double workspace_bytes(const conv2d_params& p) {
    const double crs = double(p.c_per_group()) * p.r * p.s, npq = double(p.n) * p.p() * p.q();
    return (crs * npq + double(p.k_per_group()) * npq + double(p.k) * crs) * sizeof(float);
  }

  template <class In, class Bias, class Out>
  void operator()(const Exec& exec, const In& in, const Bias& bias, const Out& out) const {
    for (int g = 0; g < p_.groups; ++g) {
      run_part(exec, part::lower, g, in, bias, out);
      run_part(exec, part::multiply, g, in, bias, out);
      run_part(exec, part::scatter, g, in, bias, out);
    }
  }

  // The three parts of a run, for group g: what the harness times one by one (the row's note).
  // Each leaves the workspace as the next one needs it: lower fills col, multiply omat.
  enum class part { lower, multiply, scatter };
  template <class In, class Bias, class Out>
  void run_part(const Exec& exec, part which, int g, const In& in, const Bias& bias, const Out& out) const {
    const int kpg = p_.k_per_group();
    if (which == part::lower) {
      const std::size_t row_blocks = (std::size_t(crs_) + lower_rows - 1) / lower_rows;
      launch_range("kcnn::im2col", exec, row_blocks * npq_, lower<In>{in, col_, p_, g, int(row_blocks)});
    } else if (which == part::multiply) {
      auto w_g = Kokkos::subview(wmat_, Kokkos::make_pair(g * kpg, (g + 1) * kpg), Kokkos::ALL());
      compat::gemm(exec, "N", "N", 1.0f, w_g, col_, 0.0f, omat_);
    } else {
      launch_range("kcnn::im2col_scatter", exec, std::size_t(p_.n) * kpg * p_.p() * p_.q(),
                   scatter<Bias, Out>{bias, out, omat_, p_, g});
    }
  }
  int groups() const { return p_.groups; }
  // Bytes each part moves at least (per run, all groups): lower reads the input (once per tap
  // it covers: r s / strides times, from cache) and writes col; multiply reads col and the
  // weights and writes omat; scatter reads omat and the bias and writes the output.
  double part_bytes(part which) const {
    const double col = double(crs_) * npq_ * p_.groups, omat = double(p_.k) * npq_;
    if (which == part::lower) return (double(p_.n) * p_.c * p_.h * p_.w + col) * sizeof(float);
    if (which == part::multiply) return (col + double(p_.k) * crs_ + omat) * sizeof(float);
    return (2 * omat + p_.k) * sizeof(float);
  }
  // Rows of col a thread of the lowering writes (one column, rows a quarter of the matrix apart):
  // its loads are issued together, before the stores.
  static constexpr int lower_rows = 4;

  // The kernels' functors are public: CUDA cannot instantiate kernels on private nested types.
  template <class Wt>
  struct pack {
    Wt wt;
    matrix wmat;
    conv2d_params p;
    KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
      const int crs = p.c_per_group() * p.r * p.s;
      const int k = int(i / crs), j = int(i % crs);
      const int c = j / (p.r * p.s), r = (j / p.s) % p.r, s = j % p.s;
      wmat(k, j) = wt(k, c, r, s);
    }
  };
  // col(row = (c, r, s), column = (n, oh, ow)); consecutive threads write consecutive columns.
  // Thread i: column i mod npq, rows b, b + B, b + 2 B, b + 3 B (b = i / npq, B = row_blocks):
  // lower_rows loads in flight, then their stores.
  template <class In>
  struct lower {
    In in;
    matrix col;
    conv2d_params p;
    int g, row_blocks;
    KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
      const std::size_t npq = col.extent(1);
      const int crs = int(col.extent(0));
      const int block = int(i / npq), column = int(i % npq);
      const int P = p.p(), Q = p.q();
      const int n = column / (P * Q), oh = (column / Q) % P, ow = column % Q;
      const int ih0 = oh * p.row_stride() - p.pad_top(), iw0 = ow * p.col_stride() - p.pad_left();
      float v[lower_rows];
      unrolled<lower_rows>([&](auto jc) {
        constexpr int j = decltype(jc)::value;
        const int row = block + j * row_blocks;
        const int c = row / (p.r * p.s), r = (row / p.s) % p.r, s = row % p.s;
        const int ih = ih0 + r * p.dilation_h, iw = iw0 + s * p.dilation_w;
        v[j] = (row < crs && ih >= 0 && ih < p.h && iw >= 0 && iw < p.w) ? float(in(n, g * p.c_per_group() + c, ih, iw))
                                                                          : 0.0f;
      });
      unrolled<lower_rows>([&](auto jc) {
        constexpr int j = decltype(jc)::value;
        const int row = block + j * row_blocks;
        if (row < crs) col(row, column) = v[j];
      });
    }
  };
  // out(n, g*kpg + kk, oh, ow) = omat(kk, (n, oh, ow)) + bias, along the output's storage order.
  template <class Bias, class Out>
  struct scatter {
    Bias bias;
    Out out;
    matrix omat;
    conv2d_params p;
    int g;
    KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
      const int kpg = p.k_per_group(), P = p.p(), Q = p.q();
      int n, kk, oh, ow;
      if constexpr (Out::layout_tag::runtime_strided)
        layout::strided::storage_coords(i, dims4{p.n, kpg, P, Q}, out.order(), n, kk, oh, ow);
      else
        Out::layout_tag::storage_coords(i, dims4{p.n, kpg, P, Q}, n, kk, oh, ow);
      const int k = g * kpg + kk;
      out(n, k, oh, ow) = omat(kk, (n * P + oh) * Q + ow) + bias(k);
    }
  };

 private:
  conv2d_params p_;
  int crs_ = 0, npq_ = 0;
  matrix col_, omat_, wmat_;
};

namespace variant {
// conv2d as im2col + KokkosBlas::gemm per group (Caffe's algorithm). Every layout. Stateful:
// kcnn::prepare(exec, v, p, in, wt, bias, out) allocates the workspace (the im2col matrix, the
// product and the packed weights: workspace_bytes()) in the execution space's memory space and
// packs wt (later changes to wt are not seen until the next prepare).
struct im2col_gemm : detail::stateful_variant<conv2d_params> {
  using op = ops::conv2d;

  template <class Exec, class In, class Wt, class Bias, class Out>
  void prepare(const Exec& exec, const conv2d_params& p, const In& in, const Wt& wt, const Bias& bias, const Out& out) {
    detail::conv2d_check<Exec>(in, wt, bias, out, p);
    auto algo = std::make_shared<conv2d_im2col_gemm<Exec>>();
    algo->prepare(exec, p, wt);
    state_.set(typeid(Exec), p, algo, algo->workspace_bytes());
  }
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt&, const Bias& bias, const Out& out, const conv2d_params& p) const {
    algorithm<Exec>(p)(exec, in, bias, out);
  }
  // The prepared algorithm, whose parts (lowering, GEMM, scatter) can be run one by one.
  template <class Exec>
  const conv2d_im2col_gemm<Exec>& algorithm(const conv2d_params& p) const {
    return state_.get<conv2d_im2col_gemm<Exec>, Exec>("conv2d", "im2col_gemm", p);
  }
};
}  // namespace variant

}  // namespace kcnn
