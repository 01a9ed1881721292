#include "install/markers.hpp"

#include <cctype>
#include <vector>

#include "fetch/simple_index.hpp"

namespace cudaenv::install {

namespace {

// A marker nested deeper than this is not one a package publishes; refused, not recursed into.
constexpr int max_depth = 32;

struct Token {
  enum Kind { word, string, op, open, close, end } kind;
  std::string text;
};

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
}

// Words, quoted strings, comparison operators and parentheses; nullopt on anything else.
std::optional<std::vector<Token>> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\t') {
      ++i;
    } else if (c == '(' || c == ')') {
      tokens.push_back({c == '(' ? Token::open : Token::close, std::string(1, c)});
      ++i;
    } else if (c == '\'' || c == '"') {
      const auto close = text.find(c, i + 1);
      if (close == std::string_view::npos) return std::nullopt;
      tokens.push_back({Token::string, std::string(text.substr(i + 1, close - i - 1))});
      i = close + 1;
    } else if (std::string_view("=!<>~").find(c) != std::string_view::npos) {
      size_t end = i;
      while (end < text.size() &&
             std::string_view("=!<>~").find(text[end]) != std::string_view::npos)
        ++end;
      tokens.push_back({Token::op, std::string(text.substr(i, end - i))});
      i = end;
    } else if (word_char(c)) {
      size_t end = i;
      while (end < text.size() && word_char(text[end])) ++end;
      tokens.push_back({Token::word, std::string(text.substr(i, end - i))});
      i = end;
    } else {
      return std::nullopt;
    }
  }
  tokens.push_back({Token::end, ""});
  return tokens;
}

bool is_comparison(const std::string& op) {
  return op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=" ||
         op == "~=" || op == "===";
}

class Evaluator {
 public:
  Evaluator(std::vector<Token> tokens, const MarkerEnvironment& environment)
      : tokens_(std::move(tokens)), environment_(environment) {}

  std::optional<bool> run() {
    auto value = any_of(0);
    if (!value || peek().kind != Token::end) return std::nullopt;
    return value;
  }

 private:
  const Token& peek() const { return tokens_[position_]; }
  const Token& next() { return tokens_[position_ < tokens_.size() - 1 ? position_++ : position_]; }
  bool next_is_word(const char* word) const {
    return peek().kind == Token::word && peek().text == word;
  }

  // `operand (WORD operand)*`: "or" over "and" chains, "and" over atoms. Both sides are always
  // read, so a malformed right side is refused even after a deciding left.
  std::optional<bool> any_of(int depth) { return chain(depth, "or"); }
  std::optional<bool> all_of(int depth) { return chain(depth, "and"); }

  std::optional<bool> chain(int depth, const std::string& word) {
    const bool is_or = word == "or";
    const auto operand = [&] { return is_or ? all_of(depth) : atom(depth); };
    auto value = operand();
    while (value && next_is_word(word.c_str())) {
      next();
      const auto right = operand();
      if (!right) return std::nullopt;
      value = is_or ? (*value || *right) : (*value && *right);
    }
    return value;
  }

  std::optional<bool> atom(int depth) {
    if (depth > max_depth) return std::nullopt;
    if (peek().kind == Token::open) {
      next();
      auto value = any_of(depth + 1);
      if (!value || next().kind != Token::close) return std::nullopt;
      return value;
    }
    const auto left = next();
    std::string op;
    if ((peek().kind == Token::op && is_comparison(peek().text)) || next_is_word("in")) {
      op = next().text;
    } else if (next_is_word("not")) {
      next();
      if (!next_is_word("in")) return std::nullopt;
      next();
      op = "not in";
    } else {
      return std::nullopt;
    }
    const auto right = next();
    return compare(left, op, right);
  }

  // The value of a variable; nullopt for a Python variable (any Python: the comparison holds).
  std::optional<std::string> variable(const std::string& name, bool& known) const {
    known = true;
    if (name == "sys_platform") return environment_.sys_platform;
    if (name == "platform_system") return environment_.platform_system;
    if (name == "os_name") return environment_.os_name;
    if (name == "platform_machine") return environment_.platform_machine;
    if (name == "extra") return fetch::normalize_project_name(environment_.extra);
    known = name == "python_version" || name == "python_full_version" ||
            name == "implementation_name" || name == "implementation_version" ||
            name == "platform_python_implementation" || name == "platform_release" ||
            name == "platform_version";
    return std::nullopt;
  }

  std::optional<bool> compare(const Token& left, const std::string& op, const Token& right) const {
    const bool left_is_variable = left.kind == Token::word;
    const bool right_is_variable = right.kind == Token::word;
    if (left_is_variable == right_is_variable) return std::nullopt;  // a variable and a string
    if ((left.kind != Token::string && !left_is_variable) ||
        (right.kind != Token::string && !right_is_variable))
      return std::nullopt;
    const auto& name = left_is_variable ? left.text : right.text;
    bool known = false;
    auto value = variable(name, known);
    if (!known) return std::nullopt;
    if (!value) return true;
    auto literal = left_is_variable ? right.text : left.text;
    if (name == "extra") literal = fetch::normalize_project_name(literal);
    const auto& a = left_is_variable ? *value : literal;
    const auto& b = left_is_variable ? literal : *value;
    if (op == "==" || op == "===") return a == b;
    if (op == "!=") return a != b;
    if (op == "in") return b.find(a) != std::string::npos;
    if (op == "not in") return b.find(a) == std::string::npos;
    if (op == "<") return a < b;
    if (op == "<=") return a <= b;
    if (op == ">") return a > b;
    if (op == ">=") return a >= b;
    return std::nullopt;  // "~=" compares versions, which no platform variable is
  }

  std::vector<Token> tokens_;
  const MarkerEnvironment& environment_;
  size_t position_ = 0;
};

}  // namespace

MarkerEnvironment marker_environment(const std::string& platform, std::string extra) {
  MarkerEnvironment environment;
  environment.platform_machine = platform == "linux-x86_64" ? "x86_64" : "aarch64";
  environment.extra = std::move(extra);
  return environment;
}

std::optional<bool> marker_holds(std::string_view marker, const MarkerEnvironment& environment) {
  auto tokens = tokenize(marker);
  if (!tokens) return std::nullopt;
  if (tokens->size() == 1) return true;
  return Evaluator(std::move(*tokens), environment).run();
}

}  // namespace cudaenv::install
