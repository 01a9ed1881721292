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
  const Environment base({{"CUDAENV_ROOT", "/r"},
                          {"PATH", "/usr/bin"},
                          {"CUDA_HOME", "/opt/vendor"},
                          {"CUDA_PATH", ""}});
  const auto active = activated(base, "/r/toolkits/12.1.1", "12.1.1");
  CHECK(active.get("CUDA_HOME") == "/r/toolkits/12.1.1");
  const auto left = without_activation(active);
  CHECK(left.variables() == base.variables());
}

TEST_CASE("entries the user added meanwhile survive, only cudaenv's leave") {
  const Environment base({{"CUDAENV_ROOT", "/r"}, {"PATH", "/usr/bin:/bin"}});
  auto active = activated(base, "/r/toolkits/12.1.1", "12.1.1");
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
  CHECK(decode("cudaenv1"));  // an activation that changed nothing
  // A garbled CUDAENV_DIFF is dropped rather than trusted.
  const auto left = without_activation(Environment({{activation_variable, "{"}, {"PATH", "/x"}}));
  CHECK(left.variables() == std::map<std::string, std::string>{{"PATH", "/x"}});
}

TEST_CASE("decoding accepts only the exact grammar, naming only managed variables") {
  REQUIRE(
      decode("cudaenv1;PATH /r/toolkits/1/bin:/usr/bin =/usr/bin /r/toolkits/1/bin;"
             "CUDA_HOME /r/toolkits/1 - ;CUDAENV_ACTIVE 1.2.3 =%24%28x%29 "));
  const char* rejected[] = {
      "cudaenv1;EDITOR /x - ",                     // not a managed variable
      "cudaenv1;LD_PRELOAD /r/toolkits/x.so - ",   //
      "cudaenv1;PROMPT_COMMAND x - ",              //
      "cudaenv1;BASH_ENV /x - ",                   //
      "cudaenv1;X%3Btouch%20p /x - ",              // a name with shell metacharacters
      "cudaenv1;PATH$(touch) /x - ",               //
      "cudaenv1;%50ATH /x - ",                     // a managed name, percent-encoded
      "cudaenv1;path /x - ",                       // names are exact
      "cudaenv1;CUDA_HOME /a%00b - ",              // NUL is no environment value
      "cudaenv1;CUDA_HOME /a%0a - ",               // lower-case hex is not what encode writes
      "cudaenv1;CUDA_HOME /a$b - ",                // a raw character encode would escape
      "cudaenv1;CUDA_HOME /a%4 - ",                // a cut escape
      "cudaenv1;CUDA_HOME /a x ",                  // BEFORE neither '-' nor '='
      "cudaenv1;CUDA_HOME /a - /x",                // ADDED for a single value
      "cudaenv1;CUDA_HOME /a - ;CUDA_HOME /b - ",  // a name twice
      "cudaenv1;CUDA_HOME /a -  ",                 // a fifth field
      "cudaenv1;",                                 // an empty record
      "cudaenv1;PATH /a - /b;EDITOR vim - ",       // one bad record spoils the whole
      " cudaenv1",                                 //
  };
  for (const char* text : rejected) {
    CAPTURE(text);
    CHECK_FALSE(decode(text));
  }
  // Nothing a rejected record names changes; CUDAENV_DIFF itself goes.
  const Environment shell({{"CUDAENV_ROOT", "/r"},
                           {"EDITOR", "vim"},
                           {"PATH", "/usr/bin"},
                           {activation_variable, "cudaenv1;PATH /usr/bin =/evil ;EDITOR vim =x "}});
  CHECK(holds_foreign_record(shell));
  auto expected = shell.variables();
  expected.erase(activation_variable);
  CHECK(without_activation(shell).variables() == expected);
}

TEST_CASE("a forged record can neither delete, insert nor set anything outside the store") {
  const StoreDirectories stores{"/r/toolkits", "/r/cudnn"};
  const Environment shell({{"PATH", "/usr/bin:/r/toolkits/1/bin:/bin"},
                           {"LD_LIBRARY_PATH", "/r/cudnn/9/lib"},
                           {"CUDA_HOME", "/opt/vendor"},
                           {"CUDACXX", "/r/toolkits/1/bin/nvcc"}});
  auto forged = [&](const std::string& text) { return revert(shell, *decode(text), stores); };
  // /usr/bin is not cudaenv's to remove, and `before` is never put back wholesale.
  CHECK(forged("cudaenv1;PATH %2Fusr%2Fbin:%2Fr%2Ftoolkits%2F1%2Fbin:%2Fbin =/evil/bin "
               "/usr/bin,/bin,/r/toolkits/1/bin")
            .get("PATH") == "/usr/bin:/bin");
  // An entry that only spells its way into the store stays.
  CHECK(forged("cudaenv1;PATH /x =/x /r/toolkits/../../usr/bin,/r/toolkits,/r/toolkitsX/bin")
            .get("PATH") == shell.get("PATH"));
  // A single value goes back only from a store path that it still holds.
  CHECK(forged("cudaenv1;CUDA_HOME /opt/vendor =/tmp/evil ").get("CUDA_HOME") == "/opt/vendor");
  CHECK(forged("cudaenv1;CUDACXX /r/toolkits/2/bin/nvcc =/tmp/evil ").get("CUDACXX") ==
        "/r/toolkits/1/bin/nvcc");
  CHECK(forged("cudaenv1;CUDAENV_ACTIVE 1.2 =%24%28x%29 ").variables() == shell.variables());
}

TEST_CASE("CUDAHOSTCXX, a compiler outside the store, only ever goes back to unset") {
  const StoreDirectories stores{"/r/toolkits", "/r/cudnn"};
  const Environment shell(std::map<std::string, std::string>{{"CUDAHOSTCXX", "/usr/bin/g++-12"}});
  const auto reverted = [&](const std::string& text) {
    return revert(shell, *decode(text), stores);
  };
  CHECK_FALSE(reverted("cudaenv1;CUDAHOSTCXX /usr/bin/g++-12 - ").get("CUDAHOSTCXX"));
  // A record cannot point it at a program, nor unset a value it did not set.
  CHECK(reverted("cudaenv1;CUDAHOSTCXX /usr/bin/g++-12 =/tmp/evil ").get("CUDAHOSTCXX") ==
        "/usr/bin/g++-12");
  CHECK(reverted("cudaenv1;CUDAHOSTCXX /usr/bin/g++-11 - ").get("CUDAHOSTCXX") ==
        "/usr/bin/g++-12");
}

TEST_CASE("an entry activation moved to the front goes back to where it was") {
  const Environment base({{"CUDAENV_ROOT", "/r"}, {"PATH", "/usr/bin:/r/toolkits/1/bin:/bin"}});
  const auto active = activated(base, "/r/toolkits/1", "1.0.0");
  CHECK(active.get("PATH") == "/r/toolkits/1/bin:/usr/bin:/bin");
  CHECK(without_activation(active).variables() == base.variables());
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
  const Changes odd{{"A;touch p", "v"}, {"$(x)", std::nullopt}, {"", "v"}, {"9A", "v"}};
  CHECK(render_changes(Shell::bash, odd).empty());
  CHECK(render_watch(Shell::zsh, {{"/p/.cudaenv", "/s/1"}, {"/c", ""}}) ==
        "__cudaenv_watch=('/p/.cudaenv' '/s/1' '/c' '');\n");
}

TEST_CASE("control characters and other bytes past ASCII are escapes, never raw, in each shell") {
  const std::string name = "p\x1b]0;x\x07\n$(y)'\\\xc3\xa9";
  CHECK(quote(Shell::bash, name) == R"($'p\x1b]0;x\x07\x0a$(y)\'\\\xc3\xa9')");
  CHECK(quote(Shell::zsh, name) == quote(Shell::bash, name));
  CHECK(quote(Shell::fish, name) == R"('p'\x1b']0;x'\x07\x0a'$(y)\'\\'\Xc3\Xa9)");
  CHECK(quote(Shell::fish, "") == "''");
  CHECK(quote(Shell::bash, "") == "''");
  CHECK(quote(Shell::fish, "\n") == "\\x0a");
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
