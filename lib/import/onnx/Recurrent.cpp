// ONNX RNN, GRU and LSTM, decomposed onto matmuls and elementwise ops. Done the way fast engines
// do it: the input projection of every time step is one matmul of the whole sequence against all
// gates' weights (with both biases folded in), and each step adds one small matmul of the previous
// hidden state against the recurrent weights, then the gate math, which fusion turns into one
// kernel per step. A sequence of static length (up to kMaxUnrolledSteps) is unrolled; a symbolic
// or longer one runs the step as the body of a run-time `loop` (graph/ControlFlow.h) carrying
// the states, its outputs the scan entries, so one compiled model serves every length. Every direction, activation list,
// clip, input_forget, peepholes, linear_before_reset, layout, initial states and optional outputs.
// `sequence_lens` is a run-time input: a step at or past a batch entry's length keeps its state
// and writes zeros to Y, as ONNX says (reverse directions then start at each entry's last valid
// step).
#include "Decompose.h"
#include "strata/support/Limits.h"

namespace strata::onnx_import {
namespace {

using Node = onnx::NodeProto;
using Values = std::vector<Value *>;

enum class Cell { Rnn, Gru, Lstm };

// Longer static sequences run as a loop too: unrolling them costs compile time and code size.
constexpr int64_t kMaxUnrolledSteps = 256;

int64_t gateCount(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 3 : 4; }

const char *cellName(Cell c) { return c == Cell::Rnn ? "RNN" : c == Cell::Gru ? "GRU" : "LSTM"; }

std::vector<std::string> attrStrings(const Node &n, const std::string &name) {
  std::vector<std::string> out;
  if (const onnx::AttributeProto *a = findAttr(n, name))
    for (const std::string &s : a->strings())
      out.push_back(s);
  return out;
}

// The activation functions of one direction with their alpha/beta, resolved from the node's
// `activations`, `activation_alpha` and `activation_beta` (alphas and betas are taken in order by
// the activations that use them).
struct Activation {
  std::string name;
  std::optional<double> alpha, beta;
};

std::vector<std::vector<Activation>> activations(const Node &n, Cell cell, int64_t dirs) {
  const size_t perDir = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 2 : 3;
  std::vector<std::string> names = attrStrings(n, "activations");
  if (names.empty()) {
    std::vector<std::string> dflt = cell == Cell::Rnn   ? std::vector<std::string>{"Tanh"}
                                    : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                        : std::vector<std::string>{"Sigmoid", "Tanh",
                                                                                   "Tanh"};
    for (int64_t d = 0; d < dirs; ++d)
      names.insert(names.end(), dflt.begin(), dflt.end());
  }
  if (names.size() != perDir * static_cast<size_t>(dirs))
    throw ConvertError("attribute 'activations' has " + std::to_string(names.size()) +
                       " entries; " + cellName(cell) + " with " + std::to_string(dirs) +
                       " direction(s) takes " + std::to_string(perDir * dirs));
  std::vector<float> alphas = attrFloats(n, "activation_alpha");
  std::vector<float> betas = attrFloats(n, "activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  std::vector<std::vector<Activation>> out(static_cast<size_t>(dirs));
  for (size_t i = 0; i < names.size(); ++i) {
    Activation a{names[i], std::nullopt, std::nullopt};
    if (activationTakesAlpha(a.name) && nextAlpha < alphas.size())
      a.alpha = alphas[nextAlpha++];
    if (activationTakesBeta(a.name) && nextBeta < betas.size())
      a.beta = betas[nextBeta++];
    out[i / perDir].push_back(a);
  }
  return out;
}

class RecurrentConverter {
public:
  RecurrentConverter(ImportContext &ctx, const Node &n, Cell cell)
      : ctx_(ctx), b_(ctx.builder()), n_(n), cell_(cell), gates_(gateCount(cell)) {}

  Values convert() {
    readInputs();
    const std::string direction = attrString(n_, "direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      throw ConvertError("attribute 'direction' is '" + direction +
                         "'; expected forward, reverse or bidirectional");
    if (dirs_ != (direction == "bidirectional" ? 2 : 1))
      throw ConvertError("W has " + std::to_string(dirs_) + " direction(s) but 'direction' is " +
                         direction);
    acts_ = activations(n_, cell_, dirs_);
    Values ys, hs, cs;
    for (int64_t d = 0; d < dirs_; ++d) {
      bool reverse = direction == "reverse" || d == 1;
      DirectionResult r = runDirection(d, reverse);
      ys.push_back(r.y);
      hs.push_back(r.h);
      cs.push_back(r.c);
    }
    // Y: [seq, dirs, batch, hidden]; Y_h, Y_c: [dirs, batch, hidden] (layout 1: batch first).
    Value *y = ys.size() == 1 ? ys[0] : b_.value(OpKind::Concat, ys, {{"axis", int64_t{1}}});
    Value *yh = hs.size() == 1 ? hs[0] : b_.value(OpKind::Concat, hs, {{"axis", int64_t{0}}});
    Value *yc = nullptr;
    if (cell_ == Cell::Lstm)
      yc = cs.size() == 1 ? cs[0] : b_.value(OpKind::Concat, cs, {{"axis", int64_t{0}}});
    if (layout_ == 1) {
      y = transpose(b_, y, {2, 0, 1, 3});
      yh = transpose(b_, yh, {1, 0, 2});
      if (yc)
        yc = transpose(b_, yc, {1, 0, 2});
    }
    Values out = {y, yh};
    if (cell_ == Cell::Lstm)
      out.push_back(yc);
    return out;
  }

private:
  struct DirectionResult {
    Value *y = nullptr, *h = nullptr, *c = nullptr;
  };

  void readInputs() {
    x_ = requiredInput(ctx_, n_, 0, "X");
    w_ = requiredInput(ctx_, n_, 1, "W");
    r_ = requiredInput(ctx_, n_, 2, "R");
    bias_ = optionalInput(ctx_, n_, 3);
    seqLens_ = optionalInput(ctx_, n_, 4);
    initH_ = optionalInput(ctx_, n_, 5);
    initC_ = cell_ == Cell::Lstm ? optionalInput(ctx_, n_, 6) : nullptr;
    peep_ = cell_ == Cell::Lstm ? optionalInput(ctx_, n_, 7) : nullptr;
    layout_ = attrInt(n_, "layout", 0);
    if (layout_ != 0 && layout_ != 1)
      throw ConvertError("attribute 'layout' must be 0 or 1, got " + std::to_string(layout_));
    if (!isFloat(x_->type().dtype))
      throw ConvertError("X must be a float tensor, got " + x_->type().str());
    if (x_->type().rank() != 3)
      throw ConvertError("X must have rank 3, got " + x_->type().str());
    if (layout_ == 1)
      x_ = transpose(b_, x_, {1, 0, 2}); // [seq, batch, input] from here on
    seqDim_ = x_->type().dims[0];
    seq_ = seqDim_.isStatic() ? seqDim_.size : -1;
    inputSize_ = staticDim(x_, 2, "input size");
    if (w_->type().rank() != 3 || r_->type().rank() != 3)
      throw ConvertError("W and R must have rank 3, got " + w_->type().str() + " and " +
                         r_->type().str());
    dirs_ = staticDim(w_, 0, "W directions");
    hidden_ = staticDim(r_, 2, "hidden size");
    if (hidden_ <= 0)
      throw ConvertError("hidden size must be positive, got " + std::to_string(hidden_));
    if (hasAttr(n_, "hidden_size") && attrInt(n_, "hidden_size", 0) != hidden_)
      throw ConvertError("attribute 'hidden_size' is " + std::to_string(attrInt(n_, "hidden_size", 0)) +
                         " but R has " + std::to_string(hidden_));
    const int64_t gh = gates_ * hidden_;
    auto expect = [&](Value *v, std::vector<int64_t> shape, const char *what) {
      if (v && v->type().staticShape() != shape) {
        std::string s;
        for (int64_t d : shape)
          s += (s.empty() ? "" : "x") + std::to_string(d);
        throw ConvertError(std::string(what) + " must be " + s + ", got " + v->type().str());
      }
      if (v && v->type().dtype != x_->type().dtype)
        throw ConvertError(std::string(what) + " has dtype " +
                           std::string(dtypeName(v->type().dtype)) + " but X has " +
                           std::string(dtypeName(x_->type().dtype)));
    };
    if (!w_->type().isStatic() || !r_->type().isStatic())
      throw ConvertError("W and R must have static shapes");
    expect(w_, {dirs_, gh, inputSize_}, "W");
    expect(r_, {dirs_, gh, hidden_}, "R");
    if (bias_) {
      if (!bias_->type().isStatic())
        throw ConvertError("B must have a static shape");
      expect(bias_, {dirs_, 2 * gh}, "B");
    }
    if (peep_) {
      if (!peep_->type().isStatic())
        throw ConvertError("P must have a static shape");
      expect(peep_, {dirs_, 3 * hidden_}, "P");
    }
    const Dim &batch = x_->type().dims[1];
    for (Value *state : {initH_, initC_})
      if (state && state->type().rank() != 3)
        throw ConvertError("initial states must have rank 3, got " + state->type().str());
    if (layout_ == 1) {
      if (initH_)
        initH_ = transpose(b_, initH_, {1, 0, 2});
      if (initC_)
        initC_ = transpose(b_, initC_, {1, 0, 2});
    }
    for (Value *state : {initH_, initC_})
      if (state && (state->type().rank() != 3 || !(state->type().dims[0] == Dim(dirs_)) ||
                    !(state->type().dims[1] == batch) || !(state->type().dims[2] == Dim(hidden_))))
        throw ConvertError("initial state must be [" + std::to_string(dirs_) + ", " + batch.str() +
                           ", " + std::to_string(hidden_) + "], got " + state->type().str());
    if (seqLens_) {
      if (!isInteger(seqLens_->type().dtype) || seqLens_->type().rank() != 1)
        throw ConvertError("sequence_lens must be a 1-D integer tensor, got " +
                           seqLens_->type().str());
      // [batch, 1] of i64, compared with each step's index.
      seqLens_ = reshape(b_, castTo(b_, seqLens_, DType::I64), {-1, 1});
    }
    clip_ = hasAttr(n_, "clip") ? std::optional<double>(attrFloat(n_, "clip", 0.f)) : std::nullopt;
    if (clip_ && !(*clip_ > 0))
      throw ConvertError("attribute 'clip' must be positive");
    inputForget_ = attrInt(n_, "input_forget", 0) != 0;
    linearBeforeReset_ = attrInt(n_, "linear_before_reset", 0) != 0;
  }

  // Slice [d] of a [dirs, ...] tensor, without the leading dim.
  Value *direction(Value *v, int64_t d) {
    Value *s = slice(b_, v, {d}, {d + 1}, {0});
    std::vector<int64_t> target; // a symbolic dim (a batch) is the one -1
    for (size_t i = 1; i < s->type().dims.size(); ++i)
      target.push_back(s->type().dims[i].isStatic() ? s->type().dims[i].size : -1);
    return reshape(b_, s, target);
  }

  // Columns [g * hidden, (g + 1) * hidden) of the last axis.
  Value *gate(Value *v, int64_t g) {
    int64_t axis = v->type().rank() - 1;
    return slice(b_, v, {g * hidden_}, {(g + 1) * hidden_}, {axis});
  }

  Value *clip(Value *v) {
    if (!clip_)
      return v;
    return maximum(b_, minimum(b_, v, scalarLike(b_, v, *clip_)), scalarLike(b_, v, -*clip_));
  }

  Value *act(int64_t d, size_t i, Value *v) {
    const Activation &a = acts_[static_cast<size_t>(d)][i];
    return namedActivation(b_, clip(v), a.name, a.alpha, a.beta);
  }

  // What a step reads besides its input and states: the recurrent weights transposed
  // [hidden, G*H], GRU's recurrent h-gate bias (linear_before_reset), the peepholes.
  struct Weights {
    Value *rT = nullptr, *rb = nullptr, *pi = nullptr, *po = nullptr, *pf = nullptr;
  };
  struct Step {
    Value *h = nullptr, *c = nullptr, *y = nullptr;
  };

  // One time step: projected input xt [batch, G*H], states h and c [batch, hidden], t the
  // step's index (i64 []) for sequence_lens. Returns the next states and the step's Y entry.
  Step step(int64_t d, const Weights &w, Value *xt, Value *h, Value *c, Value *t) {
    Value *hNew = nullptr, *cNew = nullptr;
    if (cell_ == Cell::Rnn) {
      hNew = act(d, 0, add(b_, xt, b_.value(OpKind::MatMul, {h, w.rT})));
    } else if (cell_ == Cell::Gru) {
      // Gates z, r, h: z and r take the recurrence of all of h at once.
      Value *rzr = b_.value(OpKind::MatMul, {h, slice(b_, w.rT, {0}, {2 * hidden_}, {1})});
      Value *z = act(d, 0, add(b_, gate(xt, 0), gate(rzr, 0)));
      Value *r = act(d, 0, add(b_, gate(xt, 1), gate(rzr, 1)));
      Value *rh = slice(b_, w.rT, {2 * hidden_}, {3 * hidden_}, {1});
      Value *recur;
      if (linearBeforeReset_) {
        Value *lin = b_.value(OpKind::MatMul, {h, rh});
        if (w.rb)
          lin = add(b_, lin, w.rb);
        recur = mul(b_, r, lin);
      } else {
        recur = b_.value(OpKind::MatMul, {mul(b_, r, h), rh});
        if (w.rb)
          recur = add(b_, recur, w.rb);
      }
      Value *hh = act(d, 1, add(b_, gate(xt, 2), recur));
      // (1 - z) * hh + z * h
      hNew = add(b_, mul(b_, sub(b_, scalarLike(b_, z, 1.0), z), hh), mul(b_, z, h));
    } else {
      Value *g = add(b_, xt, b_.value(OpKind::MatMul, {h, w.rT})); // gates i, o, f, c
      Value *gi = gate(g, 0), *go = gate(g, 1), *gf = gate(g, 2), *gc = gate(g, 3);
      if (w.pi)
        gi = add(b_, gi, mul(b_, w.pi, c));
      Value *i = act(d, 0, gi);
      Value *f;
      if (inputForget_) {
        f = sub(b_, scalarLike(b_, i, 1.0), i);
      } else {
        if (w.pf)
          gf = add(b_, gf, mul(b_, w.pf, c));
        f = act(d, 0, gf);
      }
      Value *cc = act(d, 1, gc);
      cNew = add(b_, mul(b_, f, c), mul(b_, i, cc));
      if (w.po)
        go = add(b_, go, mul(b_, w.po, cNew));
      Value *o = act(d, 0, go);
      hNew = mul(b_, o, act(d, 2, cNew));
    }
    Value *yt = hNew;
    if (seqLens_) {
      // Steps at or past an entry's length keep its state and write zeros.
      Value *valid = lessThan(b_, t, seqLens_);
      hNew = select(b_, valid, hNew, h);
      if (cNew)
        cNew = select(b_, valid, cNew, c);
      yt = select(b_, valid, yt, scalarLike(b_, yt, 0.0));
    }
    return {hNew, cNew, yt};
  }

  // The steps of direction d as the body of a run-time loop over the sequence: the states
  // carried, each step's Y entry a scan output (stacked in iteration order, then reversed for a
  // reverse direction).
  DirectionResult loopDirection(int64_t d, bool reverse, Value *proj, const Weights &w, Value *h,
                                Value *c) {
    const bool lstm = cell_ == Cell::Lstm;
    Value *steps = dimValue(b_, proj, 0);
    Value *last = sub(b_, steps, b_.scalar(DType::I64, 1.0));
    auto body = std::make_unique<Graph>("step");
    Value *iteration = body->addInput(TensorType(DType::I64, {}), "t");
    Value *cond = body->addInput(TensorType(DType::Bool, {}), "cond");
    Value *hIn = body->addInput(h->type(), "h");
    Value *cIn = lstm ? body->addInput(c->type(), "c") : nullptr;
    Step s;
    {
      Builder::Into into(b_, *body);
      Value *t = reverse ? sub(b_, last, iteration) : iteration;
      Value *xt = b_.value(OpKind::Gather, {proj, t}, {{"axis", Attribute(int64_t{0})}});
      s = step(d, w, xt, hIn, cIn, t);
    }
    body->addOutput(cond, "cond");
    body->addOutput(s.h, "h");
    if (lstm)
      body->addOutput(s.c, "c");
    body->addOutput(s.y, "y");
    std::vector<TensorType> types = {h->type()};
    if (lstm)
      types.push_back(c->type());
    std::vector<Dim> ydims = {seqDim_};
    ydims.insert(ydims.end(), s.y->type().dims.begin(), s.y->type().dims.end());
    types.push_back(TensorType(s.y->type().dtype, ydims));
    Values carried = {h};
    if (lstm)
      carried.push_back(c);
    Op *loop = createLoop(b_, steps, b_.scalar(DType::Bool, 1.0), carried, std::move(body), types);
    Value *ys = loop->result(lstm ? 2 : 1); // [seq, batch, hidden]
    if (reverse) // entry k is step seq-1-k
      ys = reverseSteps(b_, ys, last);
    std::vector<Dim> y4 = {seqDim_, Dim(1)};
    y4.insert(y4.end(), ys->type().dims.begin() + 1, ys->type().dims.end());
    DirectionResult r;
    r.y = reshapeTo(b_, ys, y4); // [seq, 1, batch, hidden]
    r.h = reshape(b_, loop->result(0), {1, -1, hidden_});
    if (lstm)
      r.c = reshape(b_, loop->result(1), {1, -1, hidden_});
    return r;
  }

  DirectionResult runDirection(int64_t d, bool reverse) {
    Value *wT = transpose(b_, direction(w_, d), {1, 0}); // [input, G*H]
    Value *rT = transpose(b_, direction(r_, d), {1, 0}); // [hidden, G*H]
    // Input projection of every step at once: [seq, batch, G*H], with Wb (and Rb where it adds
    // straight to the gates) folded in.
    Value *proj = b_.value(OpKind::MatMul, {x_, wT});
    Value *rb = nullptr; // GRU with linear_before_reset: Rb's h gate stays inside r * (...)
    if (bias_) {
      Value *bd = direction(bias_, d); // [2*G*H]
      Value *wb = slice(b_, bd, {0}, {gates_ * hidden_}, {0});
      Value *rbAll = slice(b_, bd, {gates_ * hidden_}, {2 * gates_ * hidden_}, {0});
      if (cell_ == Cell::Gru) {
        // z and r take Wb + Rb; the h gate takes Wbh, and Rbh where the recurrence puts it.
        Value *zrBias = add(b_, slice(b_, wb, {0}, {2 * hidden_}, {0}),
                            slice(b_, rbAll, {0}, {2 * hidden_}, {0}));
        Value *hw = slice(b_, wb, {2 * hidden_}, {3 * hidden_}, {0});
        rb = slice(b_, rbAll, {2 * hidden_}, {3 * hidden_}, {0});
        proj = add(b_, proj, b_.value(OpKind::Concat, {zrBias, hw}, {{"axis", int64_t{0}}}));
      } else {
        proj = add(b_, proj, add(b_, wb, rbAll));
      }
    }
    Value *h = initH_ ? direction(initH_, d) : nullptr; // [batch, hidden]
    Value *c = initC_ ? direction(initC_, d) : nullptr;
    Value *pi = nullptr, *po = nullptr, *pf = nullptr;
    if (peep_) {
      Value *pd = direction(peep_, d);
      pi = slice(b_, pd, {0}, {hidden_}, {0});
      po = slice(b_, pd, {hidden_}, {2 * hidden_}, {0});
      pf = slice(b_, pd, {2 * hidden_}, {3 * hidden_}, {0});
    }
    // A zero state [batch, hidden]: a constant, or for a symbolic batch one step's gate slice
    // times 0 (its shape; the inputs are finite for any model worth running).
    auto zeros = [&](Value *like) {
      const Dim &batch = like->type().dims[0];
      if (batch.isStatic())
        return b_.constant(Tensor(like->type().dtype, {batch.size, hidden_}));
      return mul(b_, gate(like, 0), scalarLike(b_, like, 0.0));
    };
    Weights wts{rT, rb, pi, po, pf};
    if (seq_ < 0 || seq_ > kMaxUnrolledSteps) {
      // The projection summed over the steps: [batch, G*H], the shape a zero state is cut from.
      Value *like = b_.value(OpKind::Reduce, {proj},
                             {{"axes", Attribute(std::vector<int64_t>{0})},
                              {"keepdims", Attribute(int64_t{0})},
                              {"kind", Attribute(std::string("sum"))}});
      if (!h)
        h = zeros(like);
      if (cell_ == Cell::Lstm && !c)
        c = zeros(like);
      return loopDirection(d, reverse, proj, wts, h, c);
    }
    std::vector<Value *> ys(static_cast<size_t>(seq_));
    for (int64_t k = 0; k < seq_; ++k) {
      const int64_t t = reverse ? seq_ - 1 - k : k;
      Value *xt = slice(b_, proj, {t}, {t + 1}, {0});
      xt = reshape(b_, xt, {-1, gates_ * hidden_}); // [batch, G*H]
      if (!h)
        h = zeros(xt);
      if (cell_ == Cell::Lstm && !c)
        c = zeros(xt);
      Step s = step(d, wts, xt, h, c, b_.scalar(DType::I64, static_cast<double>(t)));
      h = s.h;
      if (s.c)
        c = s.c;
      ys[static_cast<size_t>(t)] = reshape(b_, s.y, {1, 1, -1, hidden_}); // [1, 1, batch, hidden]
    }
    DirectionResult r;
    r.y = ys.size() == 1 ? ys[0] : b_.value(OpKind::Concat, ys, {{"axis", int64_t{0}}});
    r.h = reshape(b_, h, {1, -1, hidden_});
    if (c)
      r.c = reshape(b_, c, {1, -1, hidden_});
    return r;
  }

  ImportContext &ctx_;
  Builder &b_;
  const Node &n_;
  Cell cell_;
  int64_t gates_;
  Value *x_ = nullptr, *w_ = nullptr, *r_ = nullptr, *bias_ = nullptr, *seqLens_ = nullptr,
        *initH_ = nullptr, *initC_ = nullptr, *peep_ = nullptr;
  int64_t layout_ = 0, seq_ = 0, inputSize_ = 0, dirs_ = 1, hidden_ = 0; // seq_ -1: symbolic
  Dim seqDim_;
  std::optional<double> clip_;
  bool inputForget_ = false, linearBeforeReset_ = false;
  std::vector<std::vector<Activation>> acts_;
};

Values convertRnn(ImportContext &ctx, const Node &n) { return RecurrentConverter(ctx, n, Cell::Rnn).convert(); }
Values convertGru(ImportContext &ctx, const Node &n) { return RecurrentConverter(ctx, n, Cell::Gru).convert(); }
Values convertLstm(ImportContext &ctx, const Node &n) { return RecurrentConverter(ctx, n, Cell::Lstm).convert(); }

} // namespace

void registerRecurrentConverters(ConverterTable &t) {
  t["RNN"] = convertRnn;
  t["GRU"] = convertGru;
  t["LSTM"] = convertLstm;
}

} // namespace strata::onnx_import
