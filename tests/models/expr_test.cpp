// Stack-profile expressions: grammar, precedence, functions, limits and errors (expr.hpp).
#include "scalescope/models/expr.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace scalescope::models {
namespace {

struct Fixture {
  SymbolTable table;
  std::vector<double> values;
  Fixture() {
    for (auto [n, v] : {std::pair{"T", 4096.0}, {"H", 2048.0}, {"zero", 3.0}, {"swiglu", 1.0}, {"tp", 2.0}}) {
      table.add(n);
      values.push_back(v);
    }
  }
  double eval(const std::string& text) const {
    auto e = Expr::parse(text, table, "f.json", "$.x");
    EXPECT_TRUE(e.has_value()) << (e ? "" : e.error().str());
    return e ? e->eval(values) : std::nan("");
  }
  std::string error(const std::string& text) const {
    auto e = Expr::parse(text, table, "f.json", "$.x");
    EXPECT_FALSE(e.has_value()) << text;
    return e ? "" : e.error().str();
  }
};

TEST(Expr, ArithmeticFollowsCPrecedence) {
  const Fixture f;
  EXPECT_DOUBLE_EQ(f.eval("2*2*T*H"), 4.0 * 4096 * 2048);
  EXPECT_DOUBLE_EQ(f.eval("1 + 2*3"), 7.0);       // * before +
  EXPECT_DOUBLE_EQ(f.eval("(1 + 2)*3"), 9.0);
  EXPECT_DOUBLE_EQ(f.eval("10 - 4 - 3"), 3.0);    // left to right
  EXPECT_DOUBLE_EQ(f.eval("12/3/2"), 2.0);
  EXPECT_DOUBLE_EQ(f.eval("-H/tp"), -1024.0);
  EXPECT_DOUBLE_EQ(f.eval("1.5e3"), 1500.0);
}

TEST(Expr, ConditionsAndLogic) {
  const Fixture f;
  EXPECT_DOUBLE_EQ(f.eval("zero >= 2 ? 2 : 4"), 2.0);
  EXPECT_DOUBLE_EQ(f.eval("zero == 2 ? 2 : zero == 3 ? 3 : 4"), 3.0);  // right-associative ?:
  EXPECT_DOUBLE_EQ(f.eval("swiglu && zero > 1"), 1.0);
  EXPECT_DOUBLE_EQ(f.eval("!swiglu || zero != 3"), 0.0);
  EXPECT_DOUBLE_EQ(f.eval("1 + (zero < 3)"), 1.0);
}

TEST(Expr, Functions) {
  const Fixture f;
  EXPECT_DOUBLE_EQ(f.eval("max(1, zero, 2)"), 3.0);
  EXPECT_DOUBLE_EQ(f.eval("min(T, H)"), 2048.0);
  EXPECT_DOUBLE_EQ(f.eval("ceil(7/2) + floor(7/2) + abs(-1)"), 8.0);
}

TEST(Expr, DivisionByZeroIsNaN) {
  const Fixture f;
  EXPECT_TRUE(std::isnan(f.eval("H/(zero - 3)")));
}

TEST(Expr, ErrorsNameTheFilePathAndWhatWasExpected) {
  const Fixture f;
  EXPECT_NE(f.error("2*Q").find("f.json: $.x: in expression \"2*Q\": unknown name 'Q' (known: T, H, zero, swiglu, tp)"),
            std::string::npos);
  EXPECT_NE(f.error("2*(T").find("expected ')'"), std::string::npos);
  EXPECT_NE(f.error("T H").find("unexpected 'H'"), std::string::npos);
  EXPECT_NE(f.error("zero ? 1").find("expected ':'"), std::string::npos);
  EXPECT_NE(f.error("sqrt(T)").find("unknown function 'sqrt'"), std::string::npos);
  EXPECT_NE(f.error("max(T)").find("two or more"), std::string::npos);
  EXPECT_NE(f.error("").find("at the end"), std::string::npos);
}

TEST(Expr, HostileInputIsBounded) {
  const Fixture f;
  // 200 nested parentheses: refused at depth 64 instead of recursing without bound.
  EXPECT_NE(f.error(std::string(200, '(') + "1" + std::string(200, ')')).find("deeper than 64"), std::string::npos);
  EXPECT_NE(f.error(std::string(5000, '1')).find("4096"), std::string::npos);
  EXPECT_NE(f.error("1e999").find("bad number"), std::string::npos);
  // A long flat sum is fine: 1000 terms of 1.
  std::string sum = "1";
  for (int i = 0; i < 999; ++i) sum += "+1";
  EXPECT_DOUBLE_EQ(f.eval(sum), 1000.0);
}

}  // namespace
}  // namespace scalescope::models
