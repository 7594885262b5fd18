// layout_transform: moves a feature map between the plain channel-major layout and a blocked one,
// as TVM's layout_transform does. Layouts are written "NCHW" (any spatial letters after "NC":
// "NCW", "NCDHW") or, blocked, the same followed by the block size and "c": "NCHW8c" is
// (N, C / 8, H, W, 8), channel c stored at [c / 8, ..., c % 8]. Blocked layouts let a
// convolution load a vector of 8 channels with one instruction (layout pass: passes/alter_layout.hpp).
// Both layouts must name the same axes; the channel count must be a multiple of every block.
#pragma once

#include <cctype>

#include "nnvm/ops/checks.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// A parsed layout: the plain axis letters ("NCHW") and the channel block (0 when not blocked).
struct ChannelLayout {
  std::string axes;
  int64_t block = 0;

  bool blocked() const { return block > 0; }
  size_t rank() const { return axes.size() + (blocked() ? 1 : 0); }
  std::string to_string() const { return blocked() ? str_cat(axes, block, "c") : axes; }

  static ChannelLayout plain(size_t spatial) {
    static const char* const letters[] = {"", "W", "HW", "DHW"};
    return {std::string("NC") + letters[std::min<size_t>(spatial, 3)], 0};
  }
  static ChannelLayout blocked_by(size_t spatial, int64_t block) {
    ChannelLayout l = plain(spatial);
    l.block = block;
    return l;
  }
  // "nnvm.ops.attr" naming `attr` unless `text` is "NC" + 1-3 spatial letters, then optionally a
  // positive block size and "c".
  static ChannelLayout parse(const std::string& text, const char* attr) {
    ChannelLayout l;
    size_t i = 0;
    while (i < text.size() && std::isupper(static_cast<unsigned char>(text[i]))) l.axes += text[i++];
    bool ok = l.axes.size() >= 3 && l.axes.size() <= 5 && l.axes.compare(0, 2, "NC") == 0;
    if (ok && i < text.size()) {
      size_t digits = i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - digits < 6)
        l.block = l.block * 10 + (text[i++] - '0');
      ok = i > digits && l.block > 0 && i + 1 == text.size() && text[i] == 'c';
    }
    if (!ok)
      throw UserError("nnvm.ops.attr",
                      str_cat("attribute '", attr, "' is '", text,
                              "'; expected a layout such as NCHW or NCHW8c (N, C, spatial axes, then an optional "
                              "channel block and 'c')"),
                      {str_cat("attribute ", attr)});
    return l;
  }
};

inline te::Tensor layout_transform(const te::Tensor& X, const ChannelLayout& src, const ChannelLayout& dst,
                                   std::string name = "layout_transform") {
  if (src.axes != dst.axes)
    throw UserError("nnvm.ops.attr",
                    str_cat("layouts ", src.to_string(), " and ", dst.to_string(), " name different axes"),
                    {"attribute dst_layout"});
  check_rank(X, "X", src.rank());
  size_t spatial = src.axes.size() - 2;
  // The logical channel count, constant so blocks can be checked against it.
  auto c1 = ir::simplified_const_int(X.shape()[1]);
  if (!c1)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input X axis 1 has the symbolic extent ", ir::to_string(X.shape()[1]),
                            "; layout_transform needs a constant channel count"),
                    {"input X"});
  int64_t channels = *c1;
  if (src.blocked()) {
    if (!same_extent(X.shape()[src.rank() - 1], ir::Expr(src.block)))
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input X's last axis has ", ir::to_string(X.shape()[src.rank() - 1]),
                              " elements but src_layout ", src.to_string(), " says ", src.block),
                      {"input X"});
    channels *= src.block;
  }
  if (dst.blocked() && channels % dst.block != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input X has ", channels, " channels, which the block of dst_layout ", dst.to_string(),
                            " does not divide"),
                    {"input X"});
  std::vector<ir::Expr> shape{X.shape()[0], ir::Expr(dst.blocked() ? channels / dst.block : channels)};
  for (size_t d = 0; d < spatial; ++d) shape.push_back(X.shape()[2 + d]);
  if (dst.blocked()) shape.emplace_back(dst.block);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr c = dst.blocked() ? ir::Expr(v[1] * ir::Expr(dst.block) + v[2 + spatial]) : ir::Expr(v[1]);
        std::vector<ir::Expr> idx{v[0], src.blocked() ? ir::Expr(c / ir::Expr(src.block)) : c};
        for (size_t d = 0; d < spatial; ++d) idx.push_back(v[2 + d]);
        if (src.blocked()) idx.push_back(c % ir::Expr(src.block));
        return X(idx);
      },
      std::move(name));
}

inline OpDef layout_transform_def() {
  return OpDef{
      .name = "layout_transform",
      .input_names = {"X"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                layout_transform(in[0], ChannelLayout::parse(attrs.get_string("src_layout"), "src_layout"),
                                 ChannelLayout::parse(attrs.get_string("dst_layout"), "dst_layout"))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_injective(s[out[0]], t); },
      .doc = "feature map between layouts NCHW and blocked NCHW[x]c (attributes src_layout, dst_layout)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
