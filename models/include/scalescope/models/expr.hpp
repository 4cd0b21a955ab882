// Arithmetic expressions of stack profiles (docs/stack-profile.md): kernel bytes, GEMM sizes, memory rules and
// conditions written as text over named symbols of the model and the plan, e.g. "2*2*a*H*T" or
// "zero >= 2 ? 2 : 4".
//
// Grammar (precedence from low to high; C's operators and meaning, all values doubles, true = 1, false = 0):
//   expr    := or ('?' expr ':' expr)?
//   or      := and ('||' and)*
//   and     := cmp ('&&' cmp)*
//   cmp     := sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/') unary)*
//   unary   := ('-' | '!') unary | primary
//   primary := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'
// Functions: min(a, b, ...), max(a, b, ...), ceil(a), floor(a), abs(a).
// Names are letters, digits and '_' (not starting with a digit). Text longer than 4096 characters or nested
// deeper than 64 levels is refused (a file cannot make the parser recurse without bound). Division by zero
// evaluates to NaN, which the callers treat as an error of the file that wrote the expression.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/sim/error.hpp"

namespace scalescope::models {

/// The symbols an expression may use: a name -> slot table fixed before parsing.
class SymbolTable {
 public:
  /// Adds a name (or returns its slot if present).
  int add(std::string_view name);
  /// Slot of `name`, or -1.
  int find(std::string_view name) const;
  std::size_t size() const { return names_.size(); }
  const std::string& name(int slot) const { return names_[static_cast<std::size_t>(slot)]; }
  /// "a, b, c" for error messages.
  std::string list() const;

 private:
  std::vector<std::string> names_;
};

class Expr {
 public:
  Expr() = default;
  /// Parses `text`; unknown names, syntax errors and the limits above fail with what was expected, at
  /// `file`/`path`.
  static Expected<Expr> parse(std::string_view text, const SymbolTable& symbols, const std::string& file,
                              const std::string& path);
  /// A constant.
  static Expr constant(double v);

  /// Value with `values[slot]` for each symbol (values.size() >= the table's size at parse time).
  double eval(const std::vector<double>& values) const;
  const std::string& text() const { return text_; }
  bool empty() const { return nodes_.empty(); }
  /// Whether the expression reads symbol `slot`.
  bool uses(int slot) const;

  enum class Op : std::uint8_t {
    num, sym, neg, lnot, add, sub, mul, div, lt, le, gt, ge, eq, ne, land, lor, cond, fmin, fmax, fceil, ffloor, fabs
  };
  struct Node {
    Op op = Op::num;
    double value = 0.0;  ///< num: the constant; sym: the slot
    std::int32_t a = -1, b = -1, c = -1;  ///< operands (node indexes); fmin/fmax: a = first, b = count
  };

 private:
  double eval_node(std::int32_t i, const std::vector<double>& v) const;

  std::vector<Node> nodes_;
  std::vector<std::int32_t> args_;  ///< operand lists of min/max
  std::int32_t root_ = -1;
  std::string text_;
  friend class ExprParser;
};

}  // namespace scalescope::models
