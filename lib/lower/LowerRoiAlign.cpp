// roi_align (ONNX RoiAlign; the interpreter's lib/interp/RoiAlign.cpp computes the same f32
// operations in the same order, ONNX Runtime's): per region (the parallel loop) its start, bin
// sizes and sampling grid; per channel and bin, the grid's bilinear samples, each the four
// corners' weighted values, summed then divided (avg) or maxed. A sample outside [-1, H] x
// [-1, W] weighs nothing (read at the plane's first element, as ONNX Runtime does); grid sizes
// and corner indices are clamped so no read leaves x, whatever the regions hold.
#include "LowerImpl.h"

namespace strata::lower {

Stmt lowerRoiAlign(LowerCtx &c) {
  using loop::ExprKind;
  auto f32 = [](double v) { return loop::floatImm(v, DType::F32); };
  auto toF32 = [](const Expr &i) { return loop::cast(DType::F32, i); };
  const ops::RoiAlignOp attrs(c.op);
  if (c.inTypes[0] != DType::F32 || c.inTypes[1] != DType::F32 || c.inTypes[2] != DType::I64)
    throw LowerError("roi_align: expected f32 x and rois, i64 batch_indices");
  const Exprs &xd = c.inDims[0];
  const Expr regions = c.inDims[1][0], channels = xd[1], height = xd[2], width = xd[3];
  const int64_t oh = attrs.output_height(), ow = attrs.output_width(),
                ratio = attrs.sampling_ratio();
  const bool half = attrs.half_pixel(), max = attrs.mode() == "max";
  const double scale = static_cast<double>(static_cast<float>(attrs.spatial_scale()));
  const double offset = half ? 0.5 : 0.0;

  loop::Var r = c.newVar("r"), ch = c.newVar("c"), ph = c.newVar("ph"), pw = c.newVar("pw"),
            iy = c.newVar("iy"), ix = c.newVar("ix");
  Acc batch = makeAcc(c, "batch", DType::I64), startW = makeAcc(c, "startw", DType::F32),
      startH = makeAcc(c, "starth", DType::F32), binW = makeAcc(c, "binw", DType::F32),
      binH = makeAcc(c, "binh", DType::F32), gridW = makeAcc(c, "gridw", DType::I64),
      gridH = makeAcc(c, "gridh", DType::I64), count = makeAcc(c, "count", DType::F32),
      acc = makeAcc(c, "acc", DType::F32), first = makeAcc(c, "first", DType::I64);

  // The region: [x1, y1, x2, y2] scaled and shifted; at least 1 x 1 unless half_pixel.
  auto coord = [&](int64_t k) {
    return loop::load(c.ins[1], {loop::var(r), imm(k)}) * f32(scale) - f32(offset);
  };
  Acc roiW = makeAcc(c, "roiw", DType::F32), roiH = makeAcc(c, "roih", DType::F32);
  // A grid side: the ratio, or ceil(side / bins) clamped to [0, 4096] (NaN: 0).
  auto grid = [&](const Expr &side, int64_t bins) {
    if (ratio > 0)
      return imm(ratio);
    Expr v = loop::call(loop::Intrinsic::Ceil, {bin(ExprKind::Div, side, f32(double(bins)))});
    v = loop::select(bin(ExprKind::GT, v, f32(0)), v, f32(0));
    v = loop::select(bin(ExprKind::LT, v, f32(4096)), v, f32(4096));
    return loop::cast(DType::I64, v);
  };
  std::vector<Stmt> region = {
      batch.set(checkedDataIndex(c, loop::load(c.ins[2], {loop::var(r)}), DType::I64, xd[0],
                                 "batch_indices")),
      startW.set(coord(0)), startH.set(coord(1)), roiW.set(coord(2) - startW.get()),
      roiH.set(coord(3) - startH.get())};
  if (!half) {
    region.push_back(roiW.set(stdMax(roiW.get(), f32(1))));
    region.push_back(roiH.set(stdMax(roiH.get(), f32(1))));
  }
  region.push_back(binW.set(bin(ExprKind::Div, roiW.get(), f32(double(ow)))));
  region.push_back(binH.set(bin(ExprKind::Div, roiH.get(), f32(double(oh)))));
  region.push_back(gridW.set(grid(roiW.get(), ow)));
  region.push_back(gridH.set(grid(roiH.get(), oh)));
  region.push_back(count.set(toF32(loop::max(gridH.get() * gridW.get(), imm(1)))));

  // One sample at (yy, xx) of the bin.
  Expr yy = startH.get() + toF32(loop::var(ph)) * binH.get() +
            bin(ExprKind::Div, (toF32(loop::var(iy)) + f32(0.5)) * binH.get(), toF32(gridH.get()));
  Expr xx = startW.get() + toF32(loop::var(pw)) * binW.get() +
            bin(ExprKind::Div, (toF32(loop::var(ix)) + f32(0.5)) * binW.get(), toF32(gridW.get()));
  Acc sy = makeAcc(c, "sy", DType::F32), sx = makeAcc(c, "sx", DType::F32);
  Expr inside = loop::logicalNot(bin(
      ExprKind::Or,
      bin(ExprKind::Or, bin(ExprKind::LT, sy.get(), f32(-1)), bin(ExprKind::GT, sy.get(), toF32(height))),
      bin(ExprKind::Or, bin(ExprKind::LT, sx.get(), f32(-1)), bin(ExprKind::GT, sx.get(), toF32(width)))));
  // Clamped below at 0 (NaN too) and above at the last row/column; `top` marks the clamp.
  auto corner = [&](const Expr &v, const Expr &size, Expr &low, Expr &high, Expr &frac) {
    Expr s = loop::select(bin(ExprKind::GT, v, f32(0)), v, f32(0));
    s = loop::select(bin(ExprKind::LT, s, toF32(size)), s, toF32(size));
    Expr l = loop::cast(DType::I64, s);
    Expr top = bin(ExprKind::GE, l, size - imm(1));
    low = loop::select(top, size - imm(1), l);
    high = loop::select(top, size - imm(1), l + imm(1));
    frac = loop::select(top, toF32(size - imm(1)), s) - toF32(low);
  };
  Expr yLow, yHigh, ly, xLow, xHigh, lx;
  corner(sy.get(), height, yLow, yHigh, ly);
  corner(sx.get(), width, xLow, xHigh, lx);
  Expr hy = f32(1) - ly, hx = f32(1) - lx;
  auto weight = [&](const Expr &w) { return loop::select(inside, w, f32(0)); };
  auto at = [&](const Expr &y, const Expr &x) {
    return loop::load(c.ins[0], {batch.get(), loop::var(ch), loop::select(inside, y, imm(0)),
                                 loop::select(inside, x, imm(0))});
  };
  Expr t1 = weight(hy * hx) * at(yLow, xLow), t2 = weight(hy * lx) * at(yLow, xHigh);
  Expr t3 = weight(ly * hx) * at(yHigh, xLow), t4 = weight(ly * lx) * at(yHigh, xHigh);
  Stmt take;
  if (max) {
    Expr v = stdMax(stdMax(stdMax(t1, t2), t3), t4);
    take = loop::seq({acc.set(loop::select(bin(ExprKind::NE, first.get(), imm(0)), v,
                                           stdMax(acc.get(), v))),
                      first.set(imm(0))});
  } else {
    take = acc.set(acc.get() + (t1 + t2 + t3 + t4));
  }
  Stmt sample = loop::seq({sx.set(xx), take});
  Stmt row = loop::seq({sy.set(yy), c.loopOver(ix, gridW.get(), LoopRole::Reduction, sample)});
  Stmt perBin = loop::seq(
      {acc.set(f32(0)), first.set(imm(1)),
       // An empty plane has nothing to sample: the bin stays 0. (Static sizes only: a run-time
       // size of 0 with regions is refused by the plan, and loop IR takes symbols as >= 1.)
       loop::ifThenElse(bin(ExprKind::And,
                            bin(ExprKind::And, bin(ExprKind::GT, xd[0], imm(0)),
                                bin(ExprKind::GT, height, imm(0))),
                            bin(ExprKind::GT, width, imm(0))),
                        c.loopOver(iy, gridH.get(), LoopRole::Reduction, row)),
       loop::store(c.outs[0], {loop::var(r), loop::var(ch), loop::var(ph), loop::var(pw)},
                   max ? acc.get() : bin(ExprKind::Div, acc.get(), count.get()))});
  Stmt bins = c.loopOver(
      ch, channels, LoopRole::Reduction,
      c.loopOver(ph, imm(oh), LoopRole::Reduction, c.loopOver(pw, imm(ow), LoopRole::Reduction, perBin)));
  region.push_back(bins);
  Stmt body = loop::seq(region);
  for (const Acc &a : {batch, startW, startH, binW, binH, gridW, gridH, count, acc, first, roiW,
                       roiH, sy, sx})
    body = loop::allocate(a.buf, body);
  Stmt nest = c.loopOver(r, regions, LoopRole::Parallel, body);
  c.nest(r, {std::string(c.op.opName()), -1, true});
  return nest;
}

} // namespace strata::lower
