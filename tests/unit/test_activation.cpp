#include <algorithm>

#include <doctest/doctest.h>

#include "activate/activation.hpp"
#include "activate/shell.hpp"
#include "activate/toolkit_env.hpp"
#include "project/file_edit.hpp"

using namespace cudaenv;
using namespace cudaenv::activate;

namespace {

Environment activated(const Environment& base, const std::string& prefix,
                      const std::string& version) {
  auto target = toolkit_environment(base, {prefix, version});
  target.set(activation_variable, encode(record_activation(base, target)));
  return target;
}

}  // namespace

TEST_CASE("reverting restores set, empty and unset variables exactly") {
  const Environment base({{"PATH", "/usr/bin"}, {"CUDA_HOME", "/opt/vendor"}, {"CUDA_PATH", ""}});
  const auto active = activated(base, "/r/12.1.1", "12.1.1");
  CHECK(active.get("CUDA_HOME") == "/r/12.1.1");
  const auto left = without_activation(active);
  CHECK(left.variables() == base.variables());
}

TEST_CASE("entries the user added meanwhile survive; only cudaenv's leave") {
  const Environment base(std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}});
  auto active = activated(base, "/r/12.1.1", "12.1.1");
  active.set("PATH", "/mine:" + *active.get("PATH") + ":/also-mine");
  active.set("LD_LIBRARY_PATH", *active.get("LD_LIBRARY_PATH") + ":/my/lib");
  active.set("CUDA_HOME", "/user/changed");
  const auto left = without_activation(active);
  CHECK(left.get("PATH") == "/mine:/usr/bin:/bin:/also-mine");
  CHECK(left.get("LD_LIBRARY_PATH") == "/my/lib");
  CHECK(left.get("CUDA_HOME") == "/user/changed");  // the user's own value is theirs
  CHECK_FALSE(left.get("CUDAENV_ACTIVE"));
}

TEST_CASE("the record survives odd values and rejects what it did not write") {
  // Quotes, newlines, the record's own separators, and bytes that are not UTF-8.
  const Environment base(
      {{"PATH", "/a'b:/c\"d:/e\nf:/g h;i,j%k=-:/\xff\xfe"}, {"CUDA_HOME", "$(x)`y`;z"}});
  const auto record = record_activation(base, toolkit_environment(base, {"/r/1", "12.4.1"}));
  const auto text = encode(record);
  CHECK(text.find('\n') == std::string::npos);
  const auto back = decode(text);
  REQUIRE(back);
  CHECK(back->variables.size() == record.variables.size());
  for (std::size_t i = 0; i < record.variables.size(); ++i) {
    CHECK(back->variables[i].name == record.variables[i].name);
    CHECK(back->variables[i].before == record.variables[i].before);
    CHECK(back->variables[i].set_to == record.variables[i].set_to);
    CHECK(back->variables[i].added == record.variables[i].added);
  }
  const bool printable_ascii =
      std::all_of(text.begin(), text.end(), [](char c) { return c >= ' ' && c < 127; });
  CHECK(printable_ascii);
  CHECK_FALSE(decode("not json"));
  CHECK_FALSE(decode("cudaenv2;PATH /a - "));
  CHECK_FALSE(decode("cudaenv1;PATH %zz - "));
  CHECK_FALSE(decode("cudaenv1;PATH /a"));
  // A garbled CUDAENV_DIFF is dropped rather than trusted.
  const auto left = without_activation(Environment({{activation_variable, "{"}, {"PATH", "/x"}}));
  CHECK(left.variables() == std::map<std::string, std::string>{{"PATH", "/x"}});
}

TEST_CASE("changes list only what differs, with unset as nullopt") {
  const Environment from({{"A", "1"}, {"B", "2"}});
  const Environment to({{"A", "1"}, {"C", "3"}});
  const Changes expected{{"B", std::nullopt}, {"C", "3"}};
  CHECK(changes_between(from, to) == expected);
}

TEST_CASE("every value is one quoted word in each shell") {
  CHECK(quote(Shell::bash, "it's") == R"('it'\''s')");
  CHECK(quote(Shell::zsh, "$(x)") == "'$(x)'");
  CHECK(quote(Shell::fish, R"(a\'b)") == R"('a\\\'b')");
  const Changes changes{{"X", "v"}, {"Y", std::nullopt}};
  CHECK(render_changes(Shell::bash, changes) == "export X='v';\nunset Y;\n");
  CHECK(render_changes(Shell::fish, changes) == "set -gx X 'v';\nset -e Y;\n");
  CHECK(render_watch(Shell::zsh, {{"/p/.cudaenv", "/s/1"}, {"/c", ""}}) ==
        "__cudaenv_watch=('/p/.cudaenv' '/s/1' '/c' '');\n");
}

TEST_CASE("the hook scripts are compiled in and call the binary they were given") {
  for (auto shell : {Shell::bash, Shell::zsh, Shell::fish}) {
    const auto script = hook_script(shell, "/opt/it's/cudaenv");
    CHECK(script.find("hook-env") != std::string::npos);
    CHECK(script.find("@CUDAENV_BIN@") == std::string::npos);
    CHECK(script.find(quote(shell, "/opt/it's/cudaenv")) != std::string::npos);
  }
}

TEST_CASE("editing a project file keeps comments, order and unknown keys") {
  using project::set_string_key;
  CHECK(set_string_key("", "", "cuda", "12.1") == "cuda = \"12.1\"\n");
  CHECK(set_string_key("# pin\ncuda = \"11.8\" # old\nx = 1\n", "", "cuda", "12.4") ==
        "# pin\ncuda = \"12.4\"  # old\nx = 1\n");
  CHECK(set_string_key("x = 1\n\n[frameworks]\ntorch = \"2.3\"\n", "", "cudnn", "9") ==
        "x = 1\ncudnn = \"9\"\n\n[frameworks]\ntorch = \"2.3\"\n");
  CHECK(set_string_key("cuda = \"12\"\n", "frameworks", "torch", "2.5") ==
        "cuda = \"12\"\n\n[frameworks]\ntorch = \"2.5\"\n");
  CHECK(set_string_key("[frameworks]\ntorch = \"2.3\"\n[other]\nk = 1\n", "frameworks", "jax",
                       "12") == "[frameworks]\ntorch = \"2.3\"\njax = \"12\"\n[other]\nk = 1\n");
  CHECK(set_string_key("", "", "cuda", "a\"b\\") == "cuda = \"a\\\"b\\\\\"\n");
  CHECK(project::bare_version_as_toml("# c\n12.1\n") == "# c\ncuda = \"12.1\"\n");
  CHECK(project::bare_version_as_toml("cuda = \"12\"\n") == "cuda = \"12\"\n");
}
