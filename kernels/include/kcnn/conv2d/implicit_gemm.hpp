#pragma once
// conv2d as an implicit GEMM, tiles staged in team scratch (CUDA shared memory), a register
// fragment per thread: the structure of a cuDNN/CUTLASS fp32 convolution, written once.
//
// Per group g the convolution is the GEMM out[k][pixel] = sum over kappa of W[k][kappa] X[kappa][pixel]
// with kappa = (c, r, s) the reduction (K) axis, never materialised (no im2col):
//  * a team owns a tile of BM = 8 TM output channels x BN = 8 TN output pixels; its TM x TN
//    threads (16 x 16 on a GPU: a 128 x 128 tile) each hold an 8 x 8 fragment of accumulators
//    in registers: channels {4 tm..4 tm+3, BM/2 + 4 tm..} x pixels {4 tn..4 tn+3, BN/2 + 4 tn..}
//    (two 16-byte shared loads of each operand per K index: one shared load per 16 FMAs). A layer
//    takes the tile that multiplies the fewest zeros, the square one unless another multiplies at
//    most 3/4 of what it would (implicit_gemm_choose_shape): a narrow tile of 64 channels x 256
//    pixels (8 x 32 threads) where a group's channels fill little of a 128-channel side (64 of
//    them: ResNet-50's stage 1, depthwise), a wide one of 256 channels x 64 pixels (32 x 8) where
//    the pixels fill little of a 128-pixel side (fc6 at batch 64);
//  * the K axis is walked in steps of BK = 8 (4 in the narrow tile): the step's weight tile
//    [BK][BM] and input tile [BK][BN] are staged in two scratch buffers, double-buffered: a thread
//    issues the next step's global loads into registers, multiplies the current step from scratch,
//    then stores what it loaded into the other buffer: one barrier per step, the loads' latency
//    behind BK x 64 FMAs;
//  * kappa runs in blocks of channels (implicit_gemm_kappa_block): a block's channels at one tap,
//    then the next tap. nhwc takes a group's channels as one block (a slot's K indices are a
//    pixel's contiguous channels); a GPU path on a sliding window, the step's K (a step reads BK
//    channels at one tap where a group has BK channels or more, so only the steps at the taps
//    (r, 0) that reach new input rows wait for DRAM, the others read what those brought into L1 or
//    L2); a host or a fully connected layer, blocks of one channel (the filter's order, (c, r, s));
//  * weights are packed once by prepare as [g][kappa][k padded to BM], kappa in that order,
//    zero past the group's channels and past kappa's end: a warp's weight load is 32 x 16 bytes of
//    one row (one 16-byte load per thread per step on a GPU), or 32 floats of one row in the narrow
//    tile (a float per thread per step);
//  * the input gather goes through a table of kappa -> (c, r dilation_h, s dilation_w), built by
//    prepare: no division in the loop. Lanes run along the input's contiguous axis: along kappa
//    with c fastest in nhwc (eight channels of a pixel are one sector), along the pixels
//    otherwise (adjacent output columns in nchw, adjacent images in chwn). Zero padding, the
//    ragged tile edges and kappa's padding load zeros;
//  * pixels are ordered as the output stores them (n, oh, ow), or (oh, ow, n) in chwn;
//  * a launch of fewer than 264 tiles (kcnn/team.hpp) splits K into segments whose partial
//    sums a second pass adds (with the bias) in the output's order (a fully connected layer:
//    a few tiles of outputs, a long reduction).
// Host backends run the same source with a team of one thread (an 8 x 8 tile); they keep their
// tuned paths in the other variants.
#include <kcnn/conv2d/direct_vector_nchw.hpp>
#include <kcnn/conv2d/entry.hpp>
#include <kcnn/conv2d_params.hpp>
#include <kcnn/lanes.hpp>
#include <kcnn/layout.hpp>
#include <kcnn/map.hpp>
#include <kcnn/team.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <typeindex>
#include <utility>

namespace kcnn {

// The tile of a build: threads along the output channels and along the pixels (kcnn/team.hpp:
// 16 x 16 on a GPU path, one on a host backend), 8 x 8 outputs each.
template <class Exec>
inline constexpr int implicit_gemm_threads_side = register_tile_geometry<Exec>::side;
inline constexpr int implicit_gemm_bk = 8;  // K indices per step of the square tile
inline constexpr int implicit_gemm_min_segment = 256;  // K indices of a segment of a split launch

// A team's shape: TM x TN threads along the output channels and the pixels, an 8 x 8 fragment each
// (a tile of BM = 8 TM channels by BN = 8 TN pixels), K steps of BK indices, and LN, a warp's
// threads along the pixels (the rest of its 32 along the channels).
template <int TM_, int TN_, int BK_, int LN_>
struct implicit_gemm_tile {
  static constexpr int TM = TM_, TN = TN_, BK = BK_, LN = LN_;
  static constexpr int T = TM * TN, BM = 8 * TM, BN = 8 * TN;
};
// The square tile: 128 x 128 on a GPU path (a warp: 2 channel threads x 16 pixel threads), 8 x 8
// on a host backend.
template <class Exec>
using implicit_gemm_square =
    implicit_gemm_tile<implicit_gemm_threads_side<Exec>, implicit_gemm_threads_side<Exec>, implicit_gemm_bk,
                       implicit_gemm_threads_side<Exec>>;
// The narrow tile of a GPU path: 64 channels x 256 pixels, for layers whose groups' channels fill
// little of a square tile's 128 (ResNet's and GoogLeNet's 64-channel layers, depthwise: half of a
// square tile would multiply zero weights). The same 256 threads and 8 x 8 fragments; K steps of 4 keep a
// thread's staged loads within the square tile's (4 input floats and one weight float, where the
// square tile stages 4 and a 16-byte chunk), within the 128 registers. A warp is 4 channel threads x 8 pixel threads:
// its 16-byte shared loads read 64 and 128 distinct bytes (one wavefront each), where the square
// tile's read 32 and 256 (one and two).
template <class Exec>
using implicit_gemm_narrow =
    implicit_gemm_tile<implicit_gemm_threads_side<Exec> / 2, 2 * implicit_gemm_threads_side<Exec>, 4,
                       implicit_gemm_threads_side<Exec> / 2>;
// The wide tile of a GPU path: 256 channels x 64 pixels, for layers whose pixels fill little of a
// square tile's 128 (a fully connected layer of many outputs at batch 64, a 7 x 7 image at batch 1).
// K steps of 8: a thread stages two 16-byte weight chunks and two input floats (4-byte input loads;
// in nhwc two consecutive K indices of a pixel), as many bytes as in the square tile. A warp is 4
// channel threads x 8 pixel threads.
template <class Exec>
using implicit_gemm_wide =
    implicit_gemm_tile<2 * implicit_gemm_threads_side<Exec>, implicit_gemm_threads_side<Exec> / 2, 8,
                       implicit_gemm_threads_side<Exec> / 2>;

enum class implicit_gemm_shape { square, narrow, wide };
// The tile layer p takes on Exec: the one that multiplies the fewest zeros (past the group's
// channels and the last pixel), the square one unless another multiplies at most 3/4 of what it
// would (the narrow tile's K steps of 4 bring the gather, the stores to scratch and the barrier
// twice as often per FMA; one rule for both). Always the square tile on a host backend (a team of one thread).
template <class Exec>
implicit_gemm_shape implicit_gemm_choose_shape(const conv2d_params& p) {
  if constexpr (implicit_gemm_threads_side<Exec> == 1) {
    return implicit_gemm_shape::square;
  } else {
    const double pixels = double(p.n) * p.p() * p.q();
    const auto work = [&](int bm, int bn) {
      return std::ceil(double(p.k_per_group()) / bm) * bm * (std::ceil(pixels / bn) * bn);
    };
    const double square = work(implicit_gemm_square<Exec>::BM, implicit_gemm_square<Exec>::BN);
    const double narrow = work(implicit_gemm_narrow<Exec>::BM, implicit_gemm_narrow<Exec>::BN);
    const double wide = work(implicit_gemm_wide<Exec>::BM, implicit_gemm_wide<Exec>::BN);
    if (std::min(narrow, wide) > 0.75 * square) return implicit_gemm_shape::square;
    return narrow <= wide ? implicit_gemm_shape::narrow : implicit_gemm_shape::wide;
  }
}
// The tile layer p runs in on Exec: {output channels, output pixels} (what the traffic model charges).
template <class Exec>
std::pair<int, int> implicit_gemm_tile_shape(const conv2d_params& p) {
  switch (implicit_gemm_choose_shape<Exec>(p)) {
    case implicit_gemm_shape::narrow: return {implicit_gemm_narrow<Exec>::BM, implicit_gemm_narrow<Exec>::BN};
    case implicit_gemm_shape::wide: return {implicit_gemm_wide<Exec>::BM, implicit_gemm_wide<Exec>::BN};
    default: return {implicit_gemm_square<Exec>::BM, implicit_gemm_square<Exec>::BN};
  }
}

namespace detail {

// kappa's order: along the channels within a step where the input's lanes run along them (nhwc:
// four K indices of a slot are one pixel's contiguous channels).
template <class Layout>
inline constexpr bool implicit_gemm_channels_fastest = std::is_same_v<Layout, layout::nhwc>;

// kappa -> (c, r, s) in blocks of `block` channels: kappa = c0 R S + (r S + s) size + (c - c0), c0 =
// c - c mod block the block's first channel, size = min(block, c_per_group - c0) (a group's last
// block may be shorter). block 1 is the filter's storage order (c, r, s), s fastest; block
// c_per_group is (r, s, c), c fastest. Requires 0 <= kappa < c_per_group R S.
KOKKOS_INLINE_FUNCTION void implicit_gemm_kappa(int kappa, const conv2d_params& p, int block, int& c, int& r, int& s) {
  const int rs = p.r * p.s;
  const int c0 = kappa / (block * rs) * block;
  const int size = p.c_per_group() - c0 < block ? p.c_per_group() - c0 : block;
  const int within = kappa - c0 * rs;
  const int tap = within / size;
  c = c0 + within % size;
  r = tap / p.s;
  s = tap % p.s;
}

// The channel block of kappa's order (implicit_gemm_kappa) for layer p in Layout with K steps of bk:
//  * nhwc: all of a group's channels, (r, s, c);
//  * a team of threads (a GPU path) whose window slides (more than one output pixel): bk channels
//    at a tap, then the next tap. Each input sector is first read (from DRAM) at one of a block's
//    taps (0, 0), (1, 0), ... and then served by L1 or L2 at the other taps of the block, a few
//    steps later. In the filter's order (block 1) every third K index is a tap (r, 0) that reaches
//    input rows not read before, so nearly every step of bk waits for DRAM, where the double buffer
//    hides one step's multiply-adds (ResNet-50's 64-channel layer in nchw, on the H200's loaded
//    DRAM latency);
//  * otherwise (a host backend, a fully connected layer: no tap re-reads another's sectors) the
//    filter's order, (c, r, s), whose step reads a few consecutive input floats of a pixel.
template <class Layout>
int implicit_gemm_kappa_block(const conv2d_params& p, int bk, bool team) {
  if (implicit_gemm_channels_fastest<Layout>) return p.c_per_group();
  if (team && long(p.p()) * p.q() > 1) return std::min(bk, p.c_per_group());
  return 1;
}

// The K axis of layer p: kappa's length, padded to whole steps of bk.
inline int implicit_gemm_kappa_padded(const conv2d_params& p, int bk) {
  const int kappa = p.c_per_group() * p.r * p.s;
  return (kappa + bk - 1) / bk * bk;
}

// Packs wt as [g][kappa padded][kpad]; zero past the group's channels and kappa's end.
template <class Wt, class Pack>
struct implicit_gemm_pack_functor {
  Wt wt;
  Pack pack;
  conv2d_params p;
  int kappa_pad, kpad, block;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    const int m = int(i % std::size_t(kpad));
    const std::size_t j = i / std::size_t(kpad);
    const int kappa = int(j % std::size_t(kappa_pad));
    const int g = int(j / std::size_t(kappa_pad));
    float v = 0.0f;
    if (m < p.k_per_group() && kappa < p.c_per_group() * p.r * p.s) {
      int c, r, s;
      implicit_gemm_kappa(kappa, p, block, c, r, s);
      v = float(wt(g * p.k_per_group() + m, c, r, s));
    }
    pack(i) = v;
  }
};

// kappa -> (its element offset in the input within a group: c stride_c + r dilation_h stride_h +
// s dilation_w stride_w, r dilation_h, s dilation_w, 0): the gather adds it to a pixel's base
// offset, 32-bit (prepare refuses inputs of 2^31 elements or more). Past kappa's end a row offset
// no input row reaches, so the gather loads a zero.
template <class Layout, class Table>
struct implicit_gemm_table_functor {
  Table table;
  conv2d_params p;
  dims4 in_dims;
  int block;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const {
    const int kappa = int(i);
    int off = 0, dr = -(1 << 30), ds = 0;
    if (kappa < p.c_per_group() * p.r * p.s) {
      int c, r, s;
      implicit_gemm_kappa(kappa, p, block, c, r, s);
      dr = r * p.dilation_h;
      ds = s * p.dilation_w;
      off = int(Layout::offset(in_dims, 0, c, dr, ds));
    }
    table(4 * i + 0) = off;
    table(4 * i + 1) = dr;
    table(4 * i + 2) = ds;
    table(4 * i + 3) = 0;
  }
};

// The launch's geometry, fixed by prepare.
struct implicit_gemm_plan {
  implicit_gemm_shape shape = implicit_gemm_shape::square;  // the team's tile
  int kpad = 0;        // packed output channels per group (whole tiles)
  int kappa_pad = 0;   // K axis per group, whole steps
  int mtiles = 1, ntiles = 1;
  int steps = 0;       // K steps per group, of the tile's BK
  int splits = 1, steps_per_split = 0;
  long npix = 0;       // output pixels, N P Q
  std::size_t outputs = 0;
};

// Tile: an implicit_gemm_tile. VecB: the input tile loaded 16 bytes at a time, four channels of a
// pixel (nhwc with channels per group and channels multiples of 4, the input 16-byte aligned:
// implicit_gemm_state decides).
template <class Exec, class In, class Bias, class Out, bool VecB, class Tile>
struct implicit_gemm_functor {
  static constexpr int TM = Tile::TM, TN = Tile::TN, T = Tile::T, LN = Tile::LN;
  static constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK;
  static constexpr int a_pitch = BM;  // [BK][BM]: a warp's weight row store is conflict-free
  // A step's weight tile is BK x BM floats: a_loads per thread of a_width floats, 16-byte chunks
  // where the tile has 4 floats a thread or more, else one float a thread (the narrow tile: 4-byte
  // loads, a warp's 128 contiguous bytes, and 3 fewer registers held across the multiply than a
  // chunk for a quarter of the threads).
  static constexpr int a_width = BK * BM >= 4 * T ? 4 : 1;
  static constexpr int a_loads = BK * BM / (a_width * T);  // weight loads per thread per step
  static constexpr int a_row = BM / a_width;                // a_width-float loads per row of the tile
  using a_value = std::conditional_t<a_width == 4, chunk16<float>, float>;
  static constexpr int b_loads = BK * BN / T;               // input loads per thread per step
  static_assert(BK * BM % (a_width * T) == 0 && BK * BN % T == 0 && BK % 4 == 0,
                "kcnn: implicit GEMM tile and team do not divide");
  static_assert(T < 32 || (32 % LN == 0 && TN % LN == 0 && T % 32 == 0), "kcnn: implicit GEMM warp shape");
  using in_order = typename In::layout_tag;
  using out_order = typename Out::layout_tag;
  static constexpr bool channels_fastest = implicit_gemm_channels_fastest<in_order>;
  static_assert(!VecB || channels_fastest, "kcnn: the implicit GEMM's 16-byte input loads run along channels");
  // A slot of the input tile: 4 consecutive K indices of one pixel in nhwc (one 16-byte load with
  // VecB, else four 4-byte loads, each with its own table entry: the four may span two filter
  // taps), or 2 where a thread loads 2 inputs a step (the wide tile), else one K index.
  // One pixel per slot keeps a thread's gather state at three integers a slot (a pixel per 4-byte
  // load kept 12, and ptxas spilled across the K loop). A warp's 4-byte load then spans 32 / (BK /
  // b_width) pixels (16 in the square tile), not 4: more sectors per request from L1, the same
  // bytes from L2.
  static constexpr int b_width = !channels_fastest ? 1 : b_loads % 4 == 0 ? 4 : b_loads % 2 == 0 ? 2 : 1;
  static constexpr int b_slots = b_loads / b_width;  // input slots per thread per step
  static_assert(!VecB || b_width == 4, "kcnn: the implicit GEMM's 16-byte input loads need slots of 4 K indices");
  // [BK][BN + pad]. In nhwc a warp's store to the input tile covers `rows` K indices b_width apart,
  // 32 / rows pixels each: the pad puts the rows 32 / rows banks apart, so the store hits 32 banks
  // (square: 2 rows 4 apart, pad 4; narrow: one row; wide: 4 rows 2 apart, pad 4). Elsewhere a
  // warp stores one row of 32 pixels.
  static constexpr int b_pad() {
    constexpr int rows = channels_fastest ? BK / b_width : 1;
    for (int pad = 4; rows > 1 && pad <= 32; pad += 4)
      if (b_width * pad % 32 == 32 / rows) return pad;
    return 4;
  }
  static constexpr int b_pitch = BN + b_pad();
  static constexpr std::size_t a_floats = std::size_t(BK) * a_pitch, b_floats = std::size_t(BK) * b_pitch;
  using member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using scratch = Kokkos::View<float*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  // The pixels a thread's input loads gather for: one per slot in nhwc, one for all its loads
  // where the team covers whole rows of the input tile (its pixel is fixed).
  static constexpr int b_pixels = channels_fastest || T % BN != 0 ? b_slots : 1;
  // What a thread keeps across the team's barriers: its accumulators, the next step's loads, the
  // pixels its input loads gather for (their base offset and first input row and column; a pixel
  // past the last has a row no K index reaches).
  struct thread_state {
    float acc[8][8];
    a_value a_next[a_loads];
    float b_next[b_loads];
    int base[b_pixels], ih0[b_pixels], iw0[b_pixels];
    int a_off;  // where thread t's first weight load is in a step's rows of packed weights
  };

  const float* x;
  const float* pack;
  const int* table;
  Bias bias;
  float* target;  // the output, or the partial sums of a split launch
  conv2d_params p;
  implicit_gemm_plan plan;
  dims4 in_dims, out_dims;

  // Each buffer 4 floats longer: its first 16-byte boundary is where its tiles start (Kokkos aligns
  // a scratch View to 8 bytes; the 16-byte shared loads need 16). The boundary is reached by
  // stepping p, not by casting an integer back to a pointer: a pointer made from an integer loses
  // the shared address space, and nvcc then issues generic loads (ld.v4.f32) for the tiles where
  // it could issue ld.shared.v4.
  static std::size_t scratch_bytes() { return scratch::shmem_size(2 * a_floats + 4) + scratch::shmem_size(2 * b_floats + 4); }
  KOKKOS_INLINE_FUNCTION static float* aligned16(float* p) {
    return p + ((16 - (reinterpret_cast<std::uintptr_t>(p) & 15)) & 15) / sizeof(float);
  }

  // Thread t's place in the tile: its fragment's channel thread tm and pixel thread tn. A warp is
  // 32 / LN channel threads x LN pixel threads; warps go along the pixels first.
  KOKKOS_INLINE_FUNCTION static void fragment_of(int t, int& tm, int& tn) {
    if constexpr (T < 32) {
      tm = t / TN;
      tn = t % TN;
    } else {
      const int lane = t % 32, w = t / 32;
      tn = (w % (TN / LN)) * LN + lane % LN;
      tm = (w / (TN / LN)) * (32 / LN) + lane / LN;
    }
  }

  // Output pixel index -> (n, oh, ow), in the output's storage order.
  KOKKOS_INLINE_FUNCTION void pixel(long pix, int& n, int& oh, int& ow) const {
    const int P = p.p(), Q = p.q();
    if constexpr (std::is_same_v<out_order, layout::chwn>) {
      n = int(pix % p.n);
      const long pq = pix / p.n;
      ow = int(pq % Q);
      oh = int(pq / Q);
    } else {
      ow = int(pix % Q);
      const long nq = pix / Q;
      oh = int(nq % P);
      n = int(nq / P);
    }
  }

  // Thread t's j-th slot of a step's input tile: its (first) K index within the step and its pixel.
  // (Written per case so that what is fixed per thread is visibly so: one pixel for all loads where
  // the team covers whole rows of the tile.)
  KOKKOS_INLINE_FUNCTION static void b_slot(int t, int j, int& kk, int& pn) {
    if constexpr (channels_fastest) {  // a warp: 32 / (BK / b_width) pixels x BK K indices
      const int e = t + T * j;
      kk = b_width * (e % (BK / b_width));
      pn = e / (BK / b_width);
    } else if constexpr (T % BN == 0) { kk = t / BN + (T / BN) * j; pn = t % BN; }
    else {
      const int e = t + T * j;
      kk = e / BN;
      pn = e % BN;
    }
  }

  // The global loads of step `step` of group g into the thread's registers.
  KOKKOS_INLINE_FUNCTION void load_step(int t, thread_state& st, int g, int m0, int step) const {
    const int kappa0 = step * BK;
    // The step's rows (team-uniform) plus the thread's fixed offset: the weight address takes no
    // per-thread state but a_off (computing it from t each step kept more values live across the
    // multiply, and ptxas spilled them, reloaded every step).
    const float* a = pack + (std::size_t(g) * plan.kappa_pad + kappa0) * plan.kpad + m0 + st.a_off;
    const auto load = [](const float* q) {
      if constexpr (a_width == 4) return load_chunk16(q);
      else return detail::read_only_load(q);
    };
    unrolled<a_loads>([&](auto jc) {
      constexpr int j = decltype(jc)::value;
      if constexpr (T % a_row == 0) {  // load t + T j: T / a_row rows below load t
        st.a_next[j] = load(a + std::size_t(j * (T / a_row)) * plan.kpad);
      } else {  // load e = t + T j: row e / a_row, columns a_width (e mod a_row)..
        const int e = t + T * j;
        st.a_next[j] = load(a - st.a_off + std::size_t(e / a_row) * plan.kpad + a_width * (e % a_row));
      }
    });
    unrolled<b_slots>([&](auto jc) {
      constexpr int j = decltype(jc)::value;
      int kk, pn;
      b_slot(t, j, kk, pn);
      constexpr int q = b_pixels == 1 ? 0 : j;
      // K index k of the slot's pixel: its input offset, and whether it falls inside the image.
      const auto tap = [&](const int k, bool& inside) {
        const chunk16<int> e = load_chunk16(table + 4 * (kappa0 + k));
        const int ih = st.ih0[q] + e.v[1], iw = st.iw0[q] + e.v[2];
        inside = ih >= 0 && ih < p.h && iw >= 0 && iw < p.w;
        return st.base[q] + e.v[0];
      };
      if constexpr (VecB) {  // the slot's 4 channels share a filter tap
        bool inside;
        const int off = tap(kk, inside);
        const chunk16<float> v = inside ? load_chunk16(x + off) : chunk16<float>{};
        unrolled<4>([&](auto ic) { st.b_next[4 * j + decltype(ic)::value] = v.v[decltype(ic)::value]; });
      } else {
        unrolled<b_width>([&](auto ic) {
          constexpr int i = decltype(ic)::value;
          bool inside;
          const int off = tap(kk + i, inside);
          st.b_next[b_width * j + i] = inside ? detail::read_only_load(x + off) : 0.0f;
        });
      }
    });
  }

  KOKKOS_INLINE_FUNCTION void store_step(int t, const thread_state& st, float* as, float* bs) const {
    unrolled<a_loads>([&](auto jc) {
      constexpr int j = decltype(jc)::value;
      const int e = t + T * j;
      float* const q = as + (e / a_row) * a_pitch + a_width * (e % a_row);
      if constexpr (a_width == 4) store_chunk16(q, st.a_next[j]);
      else *q = st.a_next[j];
    });
    unrolled<b_slots>([&](auto jc) {
      constexpr int j = decltype(jc)::value;
      int kk, pn;
      b_slot(t, j, kk, pn);
      unrolled<b_width>([&](auto ic) {
        constexpr int i = decltype(ic)::value;
        bs[(kk + i) * b_pitch + pn] = st.b_next[b_width * j + i];
      });
    });
  }

  // The step's BK x 8 x 8 multiply-adds of thread t from scratch.
  KOKKOS_INLINE_FUNCTION void multiply(int t, thread_state& st, const float* as, const float* bs) const {
    int tm, tn;
    fragment_of(t, tm, tn);
    unrolled<BK>([&](auto kc) {
      constexpr int kk = decltype(kc)::value;
      const chunk16<float> a0 = load_chunk16(as + kk * a_pitch + 4 * tm);
      const chunk16<float> a1 = load_chunk16(as + kk * a_pitch + BM / 2 + 4 * tm);
      const chunk16<float> b0 = load_chunk16(bs + kk * b_pitch + 4 * tn);
      const chunk16<float> b1 = load_chunk16(bs + kk * b_pitch + BN / 2 + 4 * tn);
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          st.acc[i][j] += a0.v[i] * b0.v[j];
          st.acc[i][4 + j] += a0.v[i] * b1.v[j];
          st.acc[4 + i][j] += a1.v[i] * b0.v[j];
          st.acc[4 + i][4 + j] += a1.v[i] * b1.v[j];
        }
    });
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    int lid = m.league_rank();
    const int mt = lid % plan.mtiles; lid /= plan.mtiles;
    const int nt = lid % plan.ntiles; lid /= plan.ntiles;
    const int g = lid % p.groups;
    const int split = lid / p.groups;
    const int m0 = mt * BM;
    const long pix0 = long(nt) * BN;
    const int step0 = split * plan.steps_per_split;
    const int step_end = plan.steps < step0 + plan.steps_per_split ? plan.steps : step0 + plan.steps_per_split;
    const auto s_a = team_scratch<scratch>(m, 2 * a_floats + 4);
    const auto s_b = team_scratch<scratch>(m, 2 * b_floats + 4);
    float* const as = aligned16(s_a.data());
    float* const bs = aligned16(s_b.data());

    team_thread_state<thread_state, T> threads;
    each_team_thread(m, threads, [&](const int t, thread_state& st) {
      unrolled<8>([&](auto ic) {
        unrolled<8>([&](auto jc) { st.acc[decltype(ic)::value][decltype(jc)::value] = 0.0f; });
      });
      st.a_off = (t / a_row) * plan.kpad + a_width * (t % a_row);
      for (int q = 0; q < b_pixels; ++q) {
        int kk, pn, n, oh, ow;
        b_slot(t, q, kk, pn);
        const long pix = pix0 + pn;
        pixel(pix < plan.npix ? pix : 0, n, oh, ow);
        const int ih0 = oh * p.row_stride() - p.pad_top(), iw0 = ow * p.col_stride() - p.pad_left();
        st.base[q] = int(in_order::offset(in_dims, n, g * p.c_per_group(), 0, 0)) +
                     ih0 * int(in_order::offset(in_dims, 0, 0, 1, 0)) + iw0 * int(in_order::offset(in_dims, 0, 0, 0, 1));
        st.ih0[q] = pix < plan.npix ? ih0 : -(1 << 29);
        st.iw0[q] = iw0;
      }
      if (step0 < step_end) {
        load_step(t, st, g, m0, step0);
        store_step(t, st, as, bs);
      }
    });
    team_barrier(m);
    for (int step = step0; step < step_end; ++step) {
      const int cur = (step - step0) & 1;
      const bool next = step + 1 < step_end;
      each_team_thread(m, threads, [&](const int t, thread_state& st) {
        if (next) load_step(t, st, g, m0, step + 1);
        multiply(t, st, as + cur * a_floats, bs + cur * b_floats);
        if (next) store_step(t, st, as + (1 - cur) * a_floats, bs + (1 - cur) * b_floats);
      });
      team_barrier(m);
    }
    // The fragment to the output (or this segment's partial sums, bias added by the sum pass).
    const bool split_launch = plan.splits > 1;
    float* const dst = target + (split_launch ? std::size_t(split) * plan.outputs : std::size_t(0));
    each_team_thread(m, threads, [&](const int t, thread_state& st) {
      int tm, tn;
      fragment_of(t, tm, tn);
      // Written out: the accumulators are indexed by constants only, so they stay in registers.
      unrolled<8>([&](auto ic) {
        constexpr int i = decltype(ic)::value;
        const int mm = m0 + (i < 4 ? 4 * tm + i : BM / 2 + 4 * tm + i - 4);
        if (mm >= p.k_per_group()) return;
        const int k = g * p.k_per_group() + mm;
        const float b = split_launch ? 0.0f : float(bias(k));
        unrolled<8>([&](auto jc) {
          constexpr int j = decltype(jc)::value;
          const long pix = pix0 + (j < 4 ? 4 * tn + j : BN / 2 + 4 * tn + j - 4);
          if (pix >= plan.npix) return;
          int n, oh, ow;
          pixel(pix, n, oh, ow);
          dst[out_order::offset(out_dims, n, k, oh, ow)] = st.acc[i][j] + b;
        });
      });
    });
  }
};

// The prepared state: packed weights, the kappa table, the plan and a split launch's partial sums.
template <class Exec>
class implicit_gemm_state {
 public:
  using float_view = Kokkos::View<float*, typename Exec::memory_space>;
  using int_view = Kokkos::View<int*, typename Exec::memory_space>;
  static constexpr int TS = implicit_gemm_threads_side<Exec>;

  template <class InLayout, class OutLayout, class Wt>
  void prepare(const Exec& exec, const conv2d_params& p, const Wt& wt, const char* label) {
    p_ = p;
    input_layout_ = typeid(InLayout);
    label_ = label;
    sum_label_ = label_ + "_sum";
    plan_.shape = implicit_gemm_choose_shape<Exec>(p);
    const auto [bm, bn] = implicit_gemm_tile_shape<Exec>(p);
    const int bk = plan_.shape == implicit_gemm_shape::narrow ? implicit_gemm_narrow<Exec>::BK
                   : plan_.shape == implicit_gemm_shape::wide ? implicit_gemm_wide<Exec>::BK
                                                               : implicit_gemm_square<Exec>::BK;
    plan_.kpad = (p.k_per_group() + bm - 1) / bm * bm;
    plan_.kappa_pad = implicit_gemm_kappa_padded(p, bk);
    plan_.mtiles = plan_.kpad / bm;
    plan_.npix = long(p.n) * p.p() * p.q();
    plan_.ntiles = int((plan_.npix + bn - 1) / bn);
    plan_.steps = plan_.kappa_pad / bk;
    plan_.outputs = std::size_t(p.n) * p.k * p.p() * p.q();
    // Split K where the tiles leave the GPU idle, in at most kappa / implicit_gemm_min_segment
    // segments (a segment's partial sums cost 8 bytes of L2 traffic an output, written and read back:
    // at most 1/32 byte per FMA), the partial sums under 16 MiB (they stay in a GPU's L2 for the
    // sum pass).
    const long tiles = long(plan_.mtiles) * plan_.ntiles * p.groups;
    constexpr long min_teams = register_tile_geometry<Exec>::min_teams;
    long splits = (min_teams + tiles - 1) / tiles;
    splits = std::min<long>(splits, std::max(1, plan_.kappa_pad / implicit_gemm_min_segment));
    splits = std::min<long>(splits, std::max<long>(1, (16L << 20) / long(sizeof(float) * plan_.outputs)));
    plan_.steps_per_split = (plan_.steps + int(splits) - 1) / int(splits);
    plan_.splits = plan_.steps_per_split > 0 ? (plan_.steps + plan_.steps_per_split - 1) / plan_.steps_per_split : 1;
    split_ = {};
    split_.splits = plan_.splits;
    split_.outputs = plan_.outputs;
    // The sum pass's bias index: i / inner mod k in the output's storage order.
    split_.inner = std::is_same_v<OutLayout, layout::nhwc> ? 1
                   : std::is_same_v<OutLayout, layout::nchw> ? std::size_t(p.p()) * p.q()
                                                             : std::size_t(p.p()) * p.q() * p.n;
    if (plan_.splits > 1)
      split_.partial = float_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, label_ + ".partial"),
                                  std::size_t(plan_.splits) * plan_.outputs);
    // kappa's order: the pack and the table take it, the kernel reads the table only.
    const int block = implicit_gemm_kappa_block<InLayout>(p, bk, TS > 1);
    const std::size_t size = std::size_t(p.groups) * plan_.kappa_pad * plan_.kpad;
    pack_ = float_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, label_ + ".weights"), size);
    launch_range((label_ + "_pack").c_str(), exec, size,
                 implicit_gemm_pack_functor<Wt, float_view>{wt, pack_, p, plan_.kappa_pad, plan_.kpad, block});
    table_ = int_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, label_ + ".table"), 4 * std::size_t(plan_.kappa_pad));
    launch_range((label_ + "_table").c_str(), exec, std::size_t(plan_.kappa_pad),
                 implicit_gemm_table_functor<InLayout, int_view>{table_, p, p.input_dims(), block});
  }

  double workspace_bytes() const {
    return double(pack_.span()) * sizeof(float) + double(table_.span()) * sizeof(int) + split_.workspace_bytes();
  }
  std::type_index input_layout() const { return input_layout_; }
  const implicit_gemm_plan& plan() const { return plan_; }

  template <class In, class Bias, class Out>
  void operator()(const Exec& exec, const In& in, const Bias& bias, const Out& out) const {
    if constexpr (implicit_gemm_channels_fastest<typename In::layout_tag>) {
      // (the wide tile's thread loads one input a step: 4-byte loads)
      const bool vec = p_.c_per_group() % 4 == 0 && p_.c % 4 == 0 && plan_.shape != implicit_gemm_shape::wide &&
                       reinterpret_cast<std::uintptr_t>(in.view().data()) % 16 == 0;
      if (vec) return launch<true>(exec, in, bias, out);
    }
    launch<false>(exec, in, bias, out);
  }

 private:
  template <bool VecB, class In, class Bias, class Out>
  void launch(const Exec& exec, const In& in, const Bias& bias, const Out& out) const {
    if constexpr (TS > 1) {
      if (plan_.shape == implicit_gemm_shape::narrow)
        return launch_tile<VecB, implicit_gemm_narrow<Exec>>(exec, in, bias, out);
      // 4-byte input loads whatever VecB (a wide tile's thread loads 2 inputs a step)
      if (plan_.shape == implicit_gemm_shape::wide)
        return launch_tile<false, implicit_gemm_wide<Exec>>(exec, in, bias, out);
    }
    launch_tile<VecB, implicit_gemm_square<Exec>>(exec, in, bias, out);
  }
  template <bool VecB, class Tile, class In, class Bias, class Out>
  void launch_tile(const Exec& exec, const In& in, const Bias& bias, const Out& out) const {
    using functor = implicit_gemm_functor<Exec, In, Bias, Out, VecB, Tile>;
    float* const y = out.view().data();
    const functor f{in.view().data(), pack_.data(), table_.data(), bias, split_.target(y), p_, plan_, p_.input_dims(), p_.output_dims()};
    const int league = plan_.splits * p_.groups * plan_.ntiles * plan_.mtiles;
#if defined(KCNN_GPU_MODEL)
    // What the tiles multiply, zeros included (past the group's channels, the last pixel, kappa's end).
    model::executed_flops(2.0 * p_.groups * plan_.mtiles * Tile::BM * double(plan_.ntiles) * Tile::BN *
                          plan_.kappa_pad);
#endif
    // Two teams per SM: at most 128 registers a thread (the compile report: docs/ptx-compute.md).
    launch_teams<Kokkos::LaunchBounds<functor::T, 2>>(label_.c_str(), exec, league, functor::T, 1,
                                                       functor::scratch_bytes(), f);
    split_.sum(sum_label_.c_str(), exec, bias, y, p_.k);
  }

  conv2d_params p_;
  std::type_index input_layout_ = typeid(void);
  std::string label_, sum_label_;
  implicit_gemm_plan plan_;
  float_view pack_;
  int_view table_;
  conv_vector_split_plan<float_view> split_;
};

// The variant shared by conv2d and fc (Params: conv2d_params or fc_params, a whole-image window).
template <class Op, class Params>
struct implicit_gemm_variant : stateful_variant<Params> {
  using op = Op;
  template <class Exec, class In, class Wt, class Bias, class Out>
  void prepare(const Exec& exec, const Params& p, const In& in, const Wt& wt, const Bias& bias, const Out& out) {
    check_layouts<In, Out>();
    check<Exec>(in, wt, bias, out, p);
    detail::require_dense(name(), "implicit_gemm", in, out);
    if (double(p.n) * p.c * p.h * p.w >= 2147483648.0)
      fail(name(), "implicit_gemm: the input has 2^31 elements or more (the gather's offsets are 32-bit)");
    auto s = std::make_shared<implicit_gemm_state<Exec>>();
    s->template prepare<typename In::layout_tag, typename Out::layout_tag>(
        exec, p, wt, std::is_same_v<Op, ops::fc> ? "kcnn::fc_implicit_gemm" : "kcnn::conv2d_implicit_gemm");
    this->state_.set(typeid(Exec), p, s, s->workspace_bytes());
  }
  template <class Exec, class In, class Wt, class Bias, class Out>
  void run(const Exec& exec, const In& in, const Wt&, const Bias& bias, const Out& out, const Params& p) const {
    check_layouts<In, Out>();
    detail::require_dense(name(), "implicit_gemm", in, out);
    const auto& s = this->state_.template get<implicit_gemm_state<Exec>, Exec>(name(), "implicit_gemm", p);
    if (s.input_layout() != std::type_index(typeid(typename In::layout_tag)))
      fail(name(), std::string("implicit_gemm: prepared for an input in another layout (the weights are packed in its "
                               "K order); call kcnn::prepare again with this input, layout ") +
                       In::layout_tag::name);
    s(exec, in, bias, out);
  }

 private:
  static const char* name() { return std::is_same_v<Op, ops::fc> ? "fc" : "conv2d"; }
  template <class In, class Out>
  static constexpr void check_layouts() {
    static_assert(!In::layout_tag::runtime_strided && !Out::layout_tag::runtime_strided,
                  "kcnn: implicit_gemm needs compile-time layouts of input and output");
  }
  template <class Exec, class In, class Wt, class Bias, class Out>
  static void check(const In& in, const Wt& wt, const Bias& bias, const Out& out, const Params& p) {
    const checker<Exec> c{name()};
    c.params(p.check());
    c.tensor("in", in, p.input_dims());
    if constexpr (std::is_same_v<Op, ops::fc>) c.tensor("wt", wt, p.weight_dims());
    else c.tensor("wt", wt, p.filter_dims());
    c.vector("bias", bias, std::size_t(p.k));
    c.tensor("out", out, p.output_dims());
  }
};

}  // namespace detail

namespace variant {
// conv2d as an implicit GEMM through team scratch (see the top of this file): any geometry
// (groups, depthwise, stride, per-axis pad, dilation), compile-time dense layouts, input and
// output in any pair of them. Stateful: kcnn::prepare(exec, v, p, in, wt, bias, out) packs the
// weights as [g][kappa][k padded to the tile] and builds the kappa table, once (workspace_bytes());
// later changes to wt are not seen until the next prepare.
struct implicit_gemm : detail::implicit_gemm_variant<ops::conv2d, conv2d_params> {
  using op = ops::conv2d;
  static constexpr bool stateful = true;
};
}  // namespace variant

}  // namespace kcnn
