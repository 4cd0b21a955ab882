// Recursive-descent parser and evaluator of stack-profile expressions (grammar in expr.hpp).
#include "scalescope/models/expr.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace scalescope::models {

int SymbolTable::add(std::string_view name) {
  if (int s = find(name); s >= 0) return s;
  names_.emplace_back(name);
  return static_cast<int>(names_.size()) - 1;
}

int SymbolTable::find(std::string_view name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  return -1;
}

std::string SymbolTable::list() const {
  std::string out;
  for (const auto& n : names_) out += (out.empty() ? "" : ", ") + n;
  return out;
}

class ExprParser {
 public:
  static constexpr std::size_t kMaxText = 4096;
  static constexpr int kMaxDepth = 64;

  ExprParser(std::string_view text, const SymbolTable& symbols, const std::string& file, const std::string& path)
      : s_(text), symbols_(symbols), file_(file), path_(path) {}

  Expected<Expr> run() {
    if (s_.size() > kMaxText) return fail("expected an expression of at most 4096 characters");
    out_.text_ = std::string(s_);
    std::int32_t root = expr(0);
    if (!error_.empty()) return input_error(file_, path_, error_);
    skip();
    if (pos_ != s_.size()) return fail("unexpected '" + std::string(s_.substr(pos_, 12)) + "' at column " +
                                       std::to_string(pos_ + 1));
    out_.root_ = root;
    return std::move(out_);
  }

 private:
  using Op = Expr::Op;

  Error fail(const std::string& what) const {
    return input_error(file_, path_, "in expression \"" + std::string(s_.substr(0, 200)) + "\": " + what);
  }
  void set_error(const std::string& what) {
    if (error_.empty()) error_ = "in expression \"" + std::string(s_.substr(0, 200)) + "\": " + what;
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(std::string_view tok) {
    skip();
    if (s_.substr(pos_, tok.size()) != tok) return false;
    pos_ += tok.size();
    return true;
  }
  std::int32_t node(Op op, std::int32_t a = -1, std::int32_t b = -1, std::int32_t c = -1, double v = 0.0) {
    out_.nodes_.push_back({op, v, a, b, c});
    return static_cast<std::int32_t>(out_.nodes_.size()) - 1;
  }
  bool too_deep(int depth) {
    if (depth <= kMaxDepth) return false;
    set_error("nested deeper than 64 levels");
    return true;
  }

  std::int32_t expr(int depth) {
    if (too_deep(depth) || !error_.empty()) return -1;
    std::int32_t c = lor(depth + 1);
    if (eat("?")) {
      std::int32_t a = expr(depth + 1);
      if (!eat(":")) {
        set_error("expected ':' after '?' at column " + std::to_string(pos_ + 1));
        return -1;
      }
      std::int32_t b = expr(depth + 1);
      return node(Op::cond, c, a, b);
    }
    return c;
  }
  std::int32_t lor(int depth) {
    std::int32_t l = land(depth);
    while (error_.empty() && eat("||")) l = node(Op::lor, l, land(depth));
    return l;
  }
  std::int32_t land(int depth) {
    std::int32_t l = cmp(depth);
    while (error_.empty() && eat("&&")) l = node(Op::land, l, cmp(depth));
    return l;
  }
  std::int32_t cmp(int depth) {
    std::int32_t l = sum(depth);
    static constexpr std::pair<std::string_view, Op> kOps[] = {{"<=", Op::le}, {">=", Op::ge}, {"==", Op::eq},
                                                               {"!=", Op::ne}, {"<", Op::lt},  {">", Op::gt}};
    for (const auto& [tok, op] : kOps) {
      if (eat(tok)) return node(op, l, sum(depth));
    }
    return l;
  }
  std::int32_t sum(int depth) {
    std::int32_t l = product(depth);
    for (;;) {
      if (!error_.empty()) return l;
      if (eat("+")) l = node(Op::add, l, product(depth));
      else if (eat("-")) l = node(Op::sub, l, product(depth));
      else return l;
    }
  }
  std::int32_t product(int depth) {
    std::int32_t l = unary(depth);
    for (;;) {
      if (!error_.empty()) return l;
      if (eat("*")) l = node(Op::mul, l, unary(depth));
      else if (eat("/")) l = node(Op::div, l, unary(depth));
      else return l;
    }
  }
  std::int32_t unary(int depth) {
    if (too_deep(depth)) return -1;
    if (eat("-")) return node(Op::neg, unary(depth + 1));
    skip();
    if (pos_ < s_.size() && s_[pos_] == '!' && s_.substr(pos_, 2) != "!=") {
      ++pos_;
      return node(Op::lnot, unary(depth + 1));
    }
    return primary(depth + 1);
  }
  std::int32_t primary(int depth) {
    if (too_deep(depth)) return -1;
    skip();
    if (pos_ >= s_.size()) {
      set_error("expected a number, a name or '(' at the end");
      return -1;
    }
    const char ch = s_[pos_];
    if (ch == '(') {
      ++pos_;
      std::int32_t e = expr(depth + 1);
      if (!eat(")")) set_error("expected ')' at column " + std::to_string(pos_ + 1));
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '.') {
      double v = 0.0;
      const char* begin = s_.data() + pos_;
      const auto [end, ec] = std::from_chars(begin, s_.data() + s_.size(), v);
      if (ec != std::errc{} || !std::isfinite(v)) {
        set_error("bad number at column " + std::to_string(pos_ + 1));
        return -1;
      }
      pos_ += static_cast<std::size_t>(end - begin);
      return node(Op::num, -1, -1, -1, v);
    }
    if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      const std::size_t start = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
      const std::string_view name = s_.substr(start, pos_ - start);
      skip();
      if (pos_ < s_.size() && s_[pos_] == '(') return call(name, depth);
      const int slot = symbols_.find(name);
      if (slot < 0) {
        set_error("unknown name '" + std::string(name) + "' (known: " + symbols_.list() + ")");
        return -1;
      }
      return node(Op::sym, -1, -1, -1, slot);
    }
    set_error("unexpected '" + std::string(1, ch) + "' at column " + std::to_string(pos_ + 1));
    return -1;
  }
  std::int32_t call(std::string_view name, int depth) {
    static constexpr std::pair<std::string_view, Op> kFns[] = {
        {"min", Op::fmin}, {"max", Op::fmax}, {"ceil", Op::fceil}, {"floor", Op::ffloor}, {"abs", Op::fabs}};
    Op op = Op::num;
    bool found = false;
    for (const auto& [n, o] : kFns)
      if (n == name) op = o, found = true;
    if (!found) {
      set_error("unknown function '" + std::string(name) + "' (known: min, max, ceil, floor, abs)");
      return -1;
    }
    eat("(");
    std::vector<std::int32_t> args{expr(depth + 1)};
    while (error_.empty() && eat(",")) args.push_back(expr(depth + 1));
    if (!eat(")")) set_error("expected ')' after the arguments of " + std::string(name));
    if (!error_.empty()) return -1;
    const bool variadic = op == Op::fmin || op == Op::fmax;
    if (variadic ? args.size() < 2 : args.size() != 1) {
      set_error(std::string(name) + (variadic ? " takes two or more arguments" : " takes one argument"));
      return -1;
    }
    if (!variadic) return node(op, args[0]);
    const auto first = static_cast<std::int32_t>(out_.args_.size());
    out_.args_.insert(out_.args_.end(), args.begin(), args.end());
    return node(op, first, static_cast<std::int32_t>(args.size()));
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  const SymbolTable& symbols_;
  const std::string& file_;
  const std::string& path_;
  std::string error_;
  Expr out_;
};

Expected<Expr> Expr::parse(std::string_view text, const SymbolTable& symbols, const std::string& file,
                           const std::string& path) {
  return ExprParser(text, symbols, file, path).run();
}

Expr Expr::constant(double v) {
  Expr e;
  e.nodes_.push_back({Op::num, v, -1, -1, -1});
  e.root_ = 0;
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  e.text_ = ec == std::errc{} ? std::string(buf, end) : "0";
  return e;
}

double Expr::eval(const std::vector<double>& values) const {
  return root_ < 0 ? 0.0 : eval_node(root_, values);
}

bool Expr::uses(int slot) const {
  for (const auto& n : nodes_)
    if (n.op == Op::sym && static_cast<int>(n.value) == slot) return true;
  return false;
}

double Expr::eval_node(std::int32_t i, const std::vector<double>& v) const {
  const Node& n = nodes_[static_cast<std::size_t>(i)];
  auto A = [&] { return eval_node(n.a, v); };
  auto B = [&] { return eval_node(n.b, v); };
  switch (n.op) {
    case Op::num: return n.value;
    case Op::sym: return v[static_cast<std::size_t>(n.value)];
    case Op::neg: return -A();
    case Op::lnot: return A() == 0.0 ? 1.0 : 0.0;
    case Op::add: return A() + B();
    case Op::sub: return A() - B();
    case Op::mul: return A() * B();
    case Op::div: {
      const double d = B();
      return d == 0.0 ? std::numeric_limits<double>::quiet_NaN() : A() / d;
    }
    case Op::lt: return A() < B() ? 1.0 : 0.0;
    case Op::le: return A() <= B() ? 1.0 : 0.0;
    case Op::gt: return A() > B() ? 1.0 : 0.0;
    case Op::ge: return A() >= B() ? 1.0 : 0.0;
    case Op::eq: return A() == B() ? 1.0 : 0.0;
    case Op::ne: return A() != B() ? 1.0 : 0.0;
    case Op::land: return (A() != 0.0 && B() != 0.0) ? 1.0 : 0.0;
    case Op::lor: return (A() != 0.0 || B() != 0.0) ? 1.0 : 0.0;
    case Op::cond: return A() != 0.0 ? B() : eval_node(n.c, v);
    case Op::fceil: return std::ceil(A());
    case Op::ffloor: return std::floor(A());
    case Op::fabs: return std::fabs(A());
    case Op::fmin:
    case Op::fmax: {
      double r = eval_node(args_[static_cast<std::size_t>(n.a)], v);
      for (std::int32_t j = 1; j < n.b; ++j) {
        const double x = eval_node(args_[static_cast<std::size_t>(n.a + j)], v);
        r = n.op == Op::fmin ? std::min(r, x) : std::max(r, x);
      }
      return r;
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace scalescope::models
