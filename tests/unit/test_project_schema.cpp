// The schema of .cudaenv and config.toml: unknown, misplaced and mistyped keys are named with
// file:line and a suggestion; without a valid `cuda` such a key is an error, beside one a warning.
// And the text edits of `cudaenv use`: comments kept, pins removed.

#include <string>

#include <doctest/doctest.h>

#include "project/config.hpp"
#include "project/file_edit.hpp"
#include "project/project_file.hpp"
#include "project/schema.hpp"

using namespace cudaenv;
using namespace cudaenv::project;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a misspelled cuda in a file that pins nothing else is refused, with the fix") {
  auto typo = parse_project_file("# pin\ncdua = \"13.0\"\n", "/r/.cudaenv");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().kind == ErrorKind::usage);
  CHECK(typo.error().message == "/r/.cudaenv:2: unknown key \"cdua\"; did you mean \"cuda\"?");
  CHECK(typo.error().hint == "write cuda = \"13.0\" on line 2");

  auto upper = parse_project_file("CUDA=13.0\n", "/r/.cudaenv");
  REQUIRE_FALSE(upper.ok());
  CHECK(upper.error().message ==
        "/r/.cudaenv:1: unknown key \"CUDA\"; keys are lower-case: write \"cuda\"");
  CHECK(upper.error().hint == "write cuda = \"13.0\" on line 1");
}

TEST_CASE("misplaced keys are named with where they belong") {
  auto top_torch = parse_project_file("torch = \"2.9\"\n", "/r/.cudaenv");
  REQUIRE_FALSE(top_torch.ok());
  CHECK(top_torch.error().message ==
        "/r/.cudaenv:1: \"torch\" does not belong here; put it under [frameworks]");

  auto cuda_below = parse_project_file("[frameworks]\ntorch = \"2.9\"\ncuda = \"13.0\"\n", "/r/x");
  REQUIRE_FALSE(cuda_below.ok());
  CHECK(has(cuda_below.error().message, "/r/x:3: \"cuda\" does not belong in [frameworks]"));
  CHECK(has(cuda_below.error().message, "at the top of the file"));
  CHECK(cuda_below.error().hint == "write cuda = \"13.0\" on line 3");
}

TEST_CASE("beside a valid cuda, unknown keys are warnings and the pin holds") {
  auto file = parse_project_file(
      "cuda = \"12.4\"\ncdnn = \"9.1\"\ntorch = \"2.5\"\n[framework]\njax = \"0.4\"\n"
      "[frameworks]\npytorch = \"2.5\"\n",
      "/r/.cudaenv");
  REQUIRE(file.ok());
  CHECK(file->cuda->str() == "12.4");
  CHECK_FALSE(file->cudnn);
  CHECK(file->frameworks.empty());
  REQUIRE(file->warnings.size() == 4);
  CHECK(file->warnings[0].message ==
        "/r/.cudaenv:2: unknown key \"cdnn\" (ignored); did you mean \"cudnn\"?");
  CHECK(has(file->warnings[1].message,
            ":3: \"torch\" does not belong here (ignored); put it "
            "under [frameworks]"));
  CHECK(has(file->warnings[2].message,
            ":4: unknown key \"framework\" (ignored); did you mean "
            "[frameworks]?"));
  CHECK(has(file->warnings[3].message,
            ":7: unknown key \"pytorch\" in [frameworks] (ignored); "
            "did you mean \"torch\"?"));
}

TEST_CASE("a key nothing is close to lists the known ones, a mistyped table is an error") {
  auto file = parse_project_file("cuda = \"12.4\"\nowner = \"ml-infra\"\n", "/r/.cudaenv");
  REQUIRE(file.ok());
  REQUIRE(file->warnings.size() == 1);
  CHECK(has(file->warnings[0].message,
            "the keys are \"cuda\", \"cudnn\", \"host_compiler\", \"venv\", [frameworks]"));
  auto not_table = parse_project_file("cuda = \"12.4\"\nframeworks = \"torch\"\n", "/r/.cudaenv");
  REQUIRE_FALSE(not_table.ok());
  CHECK(has(not_table.error().message, "/r/.cudaenv:2: frameworks must be a table"));
  auto frameworks_typed = parse_project_file("cuda = \"12\"\n[frameworks]\ntorch = 2.5\n", "/r/c");
  REQUIRE_FALSE(frameworks_typed.ok());
  CHECK(frameworks_typed.error().hint == "write torch = \"2.5\"");
}

TEST_CASE("a file without keys is no error, a valid file has no warnings") {
  auto empty = parse_project_file("# nothing pinned yet\n", "/r/.cudaenv");
  REQUIRE(empty.ok());
  CHECK_FALSE(empty->cuda);
  auto full = parse_project_file(
      "cuda = \"12.4\"\ncudnn = \"9\"\n[frameworks]\ntorch = \"2.5\"\ntensorflow = \"2.17\"\n"
      "jax = \"0.4\"\n",
      "/r/.cudaenv");
  REQUIRE(full.ok());
  CHECK(full->warnings.empty());
  CHECK(full->frameworks.size() == 3);
}

TEST_CASE("config.toml: a misspelled cuda is an error, other unknown keys are warnings") {
  auto typo = parse_config("cdua = \"12.4\"\n", "/h/config.toml");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message == "/h/config.toml:1: unknown key \"cdua\"; did you mean \"cuda\"?");
  CHECK(typo.error().hint == "write cuda = \"12.4\" at the top of /h/config.toml");
  auto misplaced = parse_config("[download]\njobs = 4\ncuda = \"12.4\"\n", "/h/config.toml");
  REQUIRE_FALSE(misplaced.ok());
  CHECK(has(misplaced.error().message, ":3: \"cuda\" does not belong in [download]"));

  auto mirror = parse_config("mirorr = \"http://m\"\n[download]\nJobs = 4\n", "/h/config.toml");
  REQUIRE(mirror.ok());
  REQUIRE(mirror->warnings.size() == 2);
  CHECK(mirror->warnings[0].message ==
        "/h/config.toml:1: unknown key \"mirorr\" (ignored); did you mean \"mirror\"?");
  CHECK(mirror->warnings[1].message ==
        "/h/config.toml:3: unknown key \"Jobs\" in [download] "
        "(ignored); keys are lower-case: write \"jobs\"");
}

TEST_CASE("edit distance counts a swap of neighbours as one edit, ignoring case") {
  CHECK(edit_distance("cdua", "cuda") == 1);
  CHECK(edit_distance("CUDA", "cuda") == 0);
  CHECK(edit_distance("pytorch", "torch") == 2);
  CHECK(edit_distance("", "jax") == 3);
  CHECK(edit_distance("cudnn", "cuda") == 2);
}

TEST_CASE("use keeps the comment of a bare version line, and unsetting removes just the pin") {
  CHECK(bare_version_as_toml("13.0  # A100 nodes\n") == "cuda = \"13.0\"  # A100 nodes\n");
  CHECK(bare_version_as_toml("# top\n  12.4\t# tab\n# end\n") ==
        "# top\ncuda = \"12.4\"\t# tab\n# end\n");
  CHECK(set_string_key(bare_version_as_toml("13.0  # A100 nodes\n"), "", "cuda", "13.2") ==
        "cuda = \"13.2\"  # A100 nodes\n");

  CHECK(remove_key("# pin\ncuda = \"12\"  # why\ncudnn = \"9\"\n", "", "cuda") ==
        "# pin\ncudnn = \"9\"\n");
  CHECK(remove_key("[frameworks]\ncuda = \"12\"\n", "", "cuda") == std::nullopt);
  CHECK(remove_key("cudnn = \"9\"\n", "", "cuda") == std::nullopt);
  CHECK(has_settings("# only\n\n  # comments\n") == false);
  CHECK(has_settings("# c\n[frameworks]\n") == true);
}

TEST_CASE("venv names a directory inside the project, never one that leaves it") {
  auto file = parse_project_file("cuda = \"12.4\"\nvenv = \".venv/\"\n", "/r/.cudaenv");
  REQUIRE(file.ok());
  CHECK(file->venv == ".venv");
  CHECK(file->warnings.empty());
  for (const char* bad : {"../v", "/opt/v", "a/../../v", "", "-v", "a//b"}) {
    auto refused =
        parse_project_file("cuda = \"12.4\"\nvenv = \"" + std::string(bad) + "\"\n", "/r/.cudaenv");
    REQUIRE_FALSE(refused.ok());
    CHECK(has(refused.error().message,
              "/r/.cudaenv:2: venv must be a relative path inside the project"));
  }
  auto typed = parse_project_file("cuda = \"12.4\"\nvenv = 1\n", "/r/.cudaenv");
  REQUIRE_FALSE(typed.ok());
}
