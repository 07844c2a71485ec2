#pragma once
// conv2d, direct algorithm, tiled through team scratch (CUDA shared memory).
//
// A team owns an output tile of nb images x kb filters x th x tw pixels. For each chunk of cc
// input channels it stages the input tile (with its halo) and the filter slice in level-0
// scratch, then every thread accumulates its outputs from scratch. Tiles are shaped by the
// layout so that global loads and stores run along its fastest dimension: along w for nchw,
// along k and c for nhwc, along n for chwn. cc is the largest chunk that fits the backend's
// queried scratch limit.
#include <kcnn/conv2d/entry.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/team.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kcnn {

struct conv2d_tile {
  int nb = 1, kb = 1, th = 1, tw = 1;  // output tile: images, filters, rows, columns
  int cc = 1;                          // input channels staged per step
  int ih = 1, iw = 1;                  // input tile with halo
  std::size_t floats() const {
    return std::size_t(nb) * cc * ih * iw + std::size_t(kb) * cc * r_s + std::size_t(nb) * kb * th * tw;
  }
  std::size_t bytes() const { return floats() * sizeof(float); }
  int r_s = 1;  // r * s of the filter
  std::string describe() const {
    return "tile n" + std::to_string(nb) + "k" + std::to_string(kb) + "h" + std::to_string(th) +
           "w" + std::to_string(tw) + "c" + std::to_string(cc);
  }
};

// Chooses the tile for a layout and a scratch budget; cc = 0 if nothing fits.
template <class Layout>
conv2d_tile choose_conv2d_tile(const conv2d_params& p, std::size_t scratch_bytes) {
  conv2d_tile t;
  if constexpr (std::is_same_v<Layout, layout::nchw>) {
    t.nb = 1; t.kb = 8; t.th = 4; t.tw = 32;
  } else if constexpr (std::is_same_v<Layout, layout::nhwc>) {
    t.nb = 1; t.kb = 32; t.th = 2; t.tw = 8;
  } else {  // chwn: images are contiguous
    t.nb = 32; t.kb = 8; t.th = 2; t.tw = 2;
  }
  t.nb = std::min(t.nb, p.n);
  t.kb = std::min(t.kb, p.k_per_group());
  t.th = std::min(t.th, p.p());
  t.tw = std::min(t.tw, p.q());
  t.r_s = p.r * p.s;
  const std::size_t budget = scratch_bytes / sizeof(float);
  while (true) {
    t.ih = (t.th - 1) * p.row_stride() + p.window_h();
    t.iw = (t.tw - 1) * p.col_stride() + p.window_w();
    const std::size_t acc = std::size_t(t.nb) * t.kb * t.th * t.tw;
    const std::size_t per_c = std::size_t(t.nb) * t.ih * t.iw + std::size_t(t.kb) * t.r_s;
    if (acc < budget && (budget - acc) / per_c >= 1) {
      t.cc = int(std::min<std::size_t>(std::size_t(p.c_per_group()), (budget - acc) / per_c));
      return t;
    }
    // Shrink the largest tile extent and retry.
    if (t.tw >= t.th && t.tw > 1) t.tw = (t.tw + 1) / 2;
    else if (t.th > 1) t.th = (t.th + 1) / 2;
    else if (t.kb > 1) t.kb = (t.kb + 1) / 2;
    else if (t.nb > 1) t.nb = (t.nb + 1) / 2;
    else { t.cc = 0; return t; }
  }
}

namespace detail {

template <class Exec, class In, class Wt, class Bias, class Out>
struct conv2d_tiled_scratch_functor {
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using scratch = Kokkos::View<float*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using in_order = typename In::layout_tag;
  using out_order = typename Out::layout_tag;
  using wt_order = typename Wt::layout_tag;

  In in;
  Wt wt;
  Bias bias;
  Out out;
  conv2d_params p;
  conv2d_tile t;
  int tiles_h, tiles_w, kblocks;  // kblocks per group

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    int lid = m.league_rank();
    const int tile_w = lid % tiles_w; lid /= tiles_w;
    const int tile_h = lid % tiles_h; lid /= tiles_h;
    const int kblock = lid % (kblocks * p.groups); lid /= (kblocks * p.groups);
    const int n0 = lid * t.nb;
    const int g = kblock / kblocks, kpg = p.k_per_group(), cpg = p.c_per_group();
    const int k0 = g * kpg + (kblock % kblocks) * t.kb;
    const int k_end = (k0 + t.kb < (g + 1) * kpg) ? k0 + t.kb : (g + 1) * kpg;
    const int oh0 = tile_h * t.th, ow0 = tile_w * t.tw;
    const int ih0 = oh0 * p.row_stride() - p.pad_top(), iw0 = ow0 * p.col_stride() - p.pad_left();
    const int sh = p.row_stride(), sw = p.col_stride(), dh = p.dilation_h, dw = p.dilation_w;
    const int P = p.p(), Q = p.q();

    const dims4 in_tile{t.nb, t.cc, t.ih, t.iw};
    const dims4 out_tile{t.nb, t.kb, t.th, t.tw};
    const int wt_floats = t.kb * t.cc * t.r_s;
    const auto s_in = team_scratch<scratch>(m, in_tile.size());
    const auto s_wt = team_scratch<scratch>(m, std::size_t(wt_floats));
    const auto s_acc = team_scratch<scratch>(m, out_tile.size());

    team_rows(m, int(out_tile.size()),
                         [&](const int i) { s_acc(i) = 0.0f; });
    for (int c0 = 0; c0 < cpg; c0 += t.cc) {
      const int cc_n = (cpg - c0 < t.cc) ? cpg - c0 : t.cc;
      team_barrier(m);
      // Input tile, walked in the input layout's storage order: coalesced global loads.
      team_rows(m, int(in_tile.size()), [&](const int i) {
        int nb, cc, y, x;
        in_order::storage_coords(std::size_t(i), in_tile, nb, cc, y, x);
        const int n = n0 + nb, ih = ih0 + y, iw = iw0 + x;
        float v = 0.0f;  // zero padding and the ragged edges of the last tiles
        if (n < p.n && cc < cc_n && ih >= 0 && ih < p.h && iw >= 0 && iw < p.w)
          v = in(n, g * cpg + c0 + cc, ih, iw);
        s_in(i) = v;
      });
      // Filter slice, loaded in the filter layout's order, stored [cc][r][s][kk] so that
      // threads along k (nhwc) read consecutive words and the others read one broadcast word.
      const dims4 wt_tile{t.kb, t.cc, p.r, p.s};
      team_rows(m, wt_floats, [&](const int i) {
        int kk, cc, r, s;
        wt_order::storage_coords(std::size_t(i), wt_tile, kk, cc, r, s);
        const int k = k0 + kk;
        s_wt(((cc * p.r + r) * p.s + s) * t.kb + kk) =
            (k < k_end && cc < cc_n) ? float(wt(k, c0 + cc, r, s)) : 0.0f;
      });
      team_barrier(m);
      team_rows(m, int(out_tile.size()), [&](const int i) {
        int nb, kk, oy, ox;
        out_order::storage_coords(std::size_t(i), out_tile, nb, kk, oy, ox);
        float acc = 0.0f;
        for (int cc = 0; cc < cc_n; ++cc)
          for (int r = 0; r < p.r; ++r)
            for (int s = 0; s < p.s; ++s)
              acc += s_in(in_order::offset(in_tile, nb, cc, oy * sh + r * dh, ox * sw + s * dw)) *
                     s_wt(((cc * p.r + r) * p.s + s) * t.kb + kk);
        s_acc(i) += acc;
      });
    }
    team_barrier(m);
    team_rows(m, int(out_tile.size()), [&](const int i) {
      int nb, kk, oy, ox;
      out_order::storage_coords(std::size_t(i), out_tile, nb, kk, oy, ox);
      const int n = n0 + nb, k = k0 + kk, oh = oh0 + oy, ow = ow0 + ox;
      if (n < p.n && k < k_end && oh < P && ow < Q) out(n, k, oh, ow) = s_acc(i) + bias(k);
    });
  }
};

}  // namespace detail

namespace variant {
// A team per output tile, input and filter chunks staged in team scratch. Compile-time layouts;
// throws std::invalid_argument when no tile fits in the backend's team scratch.
struct direct_tiled_scratch {
  using op = ops::conv2d;
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt& wt, const Bias& bias, const Out& out, const conv2d_params& p) const {
    using layout_tag = typename Out::layout_tag;
    static_assert(!layout_tag::runtime_strided && !In::layout_tag::runtime_strided && !Wt::layout_tag::runtime_strided,
                  "kcnn::conv2d: direct_tiled_scratch needs compile-time layouts");
    using functor = detail::conv2d_tiled_scratch_functor<Exec, In, Wt, Bias, Out>;
    // Leave room for the alignment padding of the three scratch allocations.
    const conv2d_tile t = choose_conv2d_tile<layout_tag>(p, scratch_limit<Exec>(0) - 3 * 128);
    if (t.cc < 1) detail::fail("conv2d", "direct_tiled_scratch: no tile fits in team scratch");
    const std::size_t bytes =
        functor::scratch::shmem_size(std::size_t(t.nb) * t.cc * t.ih * t.iw) +
        functor::scratch::shmem_size(std::size_t(t.kb) * t.cc * t.r_s) +
        functor::scratch::shmem_size(std::size_t(t.nb) * t.kb * t.th * t.tw);
    const int tiles_h = (p.p() + t.th - 1) / t.th, tiles_w = (p.q() + t.tw - 1) / t.tw;
    const int kblocks = (p.k_per_group() + t.kb - 1) / t.kb;
    const int nblocks = (p.n + t.nb - 1) / t.nb;
    functor f{in, wt, bias, out, p, t, tiles_h, tiles_w, kblocks};
    const int league = nblocks * p.groups * kblocks * tiles_h * tiles_w;
    launch_teams_recommended("kcnn::conv2d_direct_tiled_scratch", exec, league, bytes, f, 256);
  }
};
}  // namespace variant

}  // namespace kcnn
