// The package-index client's parsers (fetch/simple_index) and the wheel mapping
// (install/wheels), on PyPI's own answers (tests/fixtures/pypi/, see SOURCES.md there) and on
// hostile pages.

#include <chrono>
#include <fstream>
#include <sstream>

#include <doctest/doctest.h>

#include "fetch/simple_index.hpp"
#include "install/markers.hpp"
#include "install/wheels.hpp"

using namespace cudaenv;
using namespace cudaenv::fetch;
using namespace cudaenv::install;

namespace {

std::string fixture(const std::string& name) {
  const auto path = std::string(CUDAENV_FIXTURES_DIR) + "/pypi/" + name;
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string page = "https://pypi.org/simple/cuda-toolkit/";

const IndexFile* named(const std::vector<IndexFile>& files, const std::string& filename) {
  for (const auto& file : files)
    if (file.filename == filename) return &file;
  return nullptr;
}

}  // namespace

TEST_CASE("PyPI's HTML and JSON pages list the same files with the same digests") {
  const auto html = parse_simple_html(fixture("cuda-toolkit.html"), page);
  const auto json = parse_simple_json(fixture("cuda-toolkit.json"), page);
  REQUIRE(html.ok());
  REQUIRE(json.ok());
  CHECK(html->size() == json->size());
  const auto* from_html = named(*html, "cuda_toolkit-13.0.2-py2.py3-none-any.whl");
  const auto* from_json = named(*json, "cuda_toolkit-13.0.2-py2.py3-none-any.whl");
  REQUIRE(from_html != nullptr);
  REQUIRE(from_json != nullptr);
  CHECK(from_html->sha256 == "b198824cf2f54003f50d64ada3a0f184b42ca0846c1c94192fa269ecd97a66eb");
  CHECK(from_json->sha256 == from_html->sha256);
  CHECK(from_json->url == from_html->url);
  CHECK(from_html->url.find('#') == std::string::npos);
  CHECK(from_json->size == 2364);
}

TEST_CASE("the newest cuda-toolkit matching a spec, and its pins") {
  const auto files = parse_simple_json(fixture("cuda-toolkit.json"), page).value();
  const auto versions = wheel_versions(files, "cuda-toolkit", "linux-x86_64");
  REQUIRE(!versions.empty());
  // NVIDIA published 13.0.3 as cuda_toolkit-13.0.3.0: the install names the release 13.0.3.
  CHECK(VersionSpec::parse("13.0").value().best_match(versions)->str() == "13.0.3.0");
  const auto pins =
      toolkit_pins(fixture("cuda_toolkit-13.0.2.METADATA"), "linux-x86_64", "13.0.2").value();
  auto pin_of = [&](const std::string& project) {
    for (const auto& pin : pins)
      if (pin.project == project) return pin.version;
    return std::string("(none)");
  };
  CHECK(pin_of("nvidia-cuda-nvcc") == "13.0.88");     // redistrib_13.0.2.json: cuda_nvcc 13.0.88
  CHECK(pin_of("nvidia-cuda-runtime") == "13.0.96");  // cuda_cudart 13.0.96
  CHECK(pin_of("nvidia-cublas") == "13.1.0.3");       // libcublas 13.1.0.3
  CHECK(pins.size() == 25);                           // each once, though several extras name it
  CHECK(component_of_wheel("nvidia-cuda-runtime") == "cuda_cudart");
  CHECK(component_of_wheel("nvidia-cuda-nvcc-cu12") == "cuda_nvcc");
  const auto skipped = components_without_wheels(pins);
  CHECK(std::find(skipped.begin(), skipped.end(), "cuda_gdb") != skipped.end());
  CHECK(std::find(skipped.begin(), skipped.end(), "cuda_nvcc") == skipped.end());
}

namespace {

const WheelPin* pin_named(const std::vector<WheelPin>& pins, const std::string& project) {
  for (const auto& pin : pins)
    if (pin.project == project) return &pin;
  return nullptr;
}

}  // namespace

TEST_CASE("a pin counts only where its marker holds, as pip decides") {
  // cuda-toolkit 13.5.0: nvidia-cudla for aarch64 only, nvjitlink by a range.
  const auto metadata = fixture("cuda_toolkit-13.5.0.METADATA");
  const auto x86 = toolkit_pins(metadata, "linux-x86_64", "13.5.0").value();
  const auto arm = toolkit_pins(metadata, "linux-sbsa", "13.5.0").value();
  CHECK(pin_named(x86, "nvidia-cudla") == nullptr);
  REQUIRE(pin_named(arm, "nvidia-cudla") != nullptr);
  CHECK(pin_named(arm, "nvidia-cudla")->version == "13.5.25");
  // nvidia-cuda-opencl: Linux x86-64 and Windows, not Linux aarch64.
  CHECK(pin_named(x86, "nvidia-cuda-opencl") != nullptr);
  CHECK(pin_named(arm, "nvidia-cuda-opencl") == nullptr);
  const auto* nvjitlink = pin_named(x86, "nvidia-nvjitlink");
  REQUIRE(nvjitlink != nullptr);
  CHECK(nvjitlink->range == "<14,>=13.5.37");
  CHECK(nvjitlink->version == "13.5.37");
  CHECK(pin_named(x86, "nvidia-cuda-nvcc")->range.empty());
  // 13.2.0 marks nvidia-cudla for all of Linux: the marker alone keeps it (the plan then finds
  // that the project has no x86-64 wheel).
  const auto older =
      toolkit_pins(fixture("cuda_toolkit-13.2.0.METADATA"), "linux-x86_64", "13.2.0");
  REQUIRE(older.ok());
  CHECK(pin_named(*older, "nvidia-cudla") != nullptr);
}

TEST_CASE("markers: the platform variables, either side, parentheses, and what is refused") {
  const auto x86 = marker_environment("linux-x86_64", "all");
  const auto arm = marker_environment("linux-sbsa", "all");
  CHECK(marker_holds("", x86) == true);
  CHECK(marker_holds("sys_platform == 'linux' and platform_machine == 'x86_64'", x86) == true);
  CHECK(marker_holds("sys_platform == 'linux' and platform_machine == 'x86_64'", arm) == false);
  CHECK(marker_holds("'aarch64' == platform_machine", arm) == true);
  CHECK(marker_holds("sys_platform == \"win32\" or (os_name == 'posix' and extra == 'ALL')", x86) ==
        true);
  CHECK(marker_holds("extra == 'cudla'", arm) == false);
  CHECK(marker_holds("platform_machine in 'x86_64 aarch64'", x86) == true);
  CHECK(marker_holds("platform_machine not in 'aarch64'", x86) == true);
  // A prefix serves every Python.
  CHECK(marker_holds("python_version < '3.9' and sys_platform == 'linux'", x86) == true);
  // Not markers: refused, never guessed.
  CHECK(!marker_holds("sys_platform ==", x86));
  CHECK(!marker_holds("unknown_variable == 'x'", x86));
  CHECK(!marker_holds("'a' == 'b'", x86));
  CHECK(!marker_holds("sys_platform == 'linux' and", x86));
  CHECK(!marker_holds("(sys_platform == 'linux'", x86));
  CHECK(!marker_holds("sys_platform == 'linux", x86));
  CHECK(!marker_holds("sys_platform == 'linux'; rm -rf /", x86));
  CHECK(!marker_holds(std::string(1000, '(') + "extra == 'all'" + std::string(1000, ')'), x86));
  // A requirement whose marker cannot be read makes the metapackage unreadable, named.
  const auto bad = toolkit_pins("Requires-Dist: nvidia-cuda-nvcc==13.0.88.*; sys_platform =! 'x'\n",
                                "linux-x86_64", "cuda_toolkit-13.0.2.whl");
  REQUIRE(!bad.ok());
  CHECK(bad.error().message.find("cuda_toolkit-13.0.2.whl: cannot read the requirement") == 0);
}

TEST_CASE("relative links resolve against the page, fragments carry the digest") {
  const auto files = *parse_simple_html(
      "<html><body><A HREF='../../files/x-1.0-py3-none-any.whl#sha256=" + std::string(64, 'A') +
          "' data-yanked>x-1.0-py3-none-any.whl</A>\n"
          "<a href=\"/f/a&amp;b.whl#md5=00\">a&amp;b.whl</a><a>no link</a><abbr>not a link</abbr>",
      "http://127.0.0.1:8080/simple/x/");
  REQUIRE(files.size() == 2);
  CHECK(files[0].url == "http://127.0.0.1:8080/files/x-1.0-py3-none-any.whl");
  CHECK(files[0].sha256 == std::string(64, 'a'));
  CHECK(files[0].yanked);
  CHECK(files[1].url == "http://127.0.0.1:8080/f/a&b.whl");
  CHECK(files[1].filename == "a&b.whl");
  CHECK(files[1].sha256.empty());
}

TEST_CASE("hostile or broken pages give nothing rather than a crash") {
  CHECK(parse_simple_html("<a href=\"x", page)->empty());
  CHECK(parse_simple_html("<a href=x>unterminated", page)->empty());
  CHECK(parse_simple_html(std::string(100000, '<'), page)->empty());
  CHECK(!parse_simple_json("[]", page).ok());
  CHECK(!parse_simple_json("{\"files\": 3}", page).ok());
  const auto odd = parse_simple_json(
      R"({"files": [1, {"filename": 2}, {"filename": "a.whl", "url": "a.whl", "hashes": {"sha256": "zz"}}]})",
      page);
  REQUIRE(odd.ok());
  REQUIRE(odd->size() == 1);
  CHECK(odd->front().sha256.empty());
  CHECK(odd->front().url == page + "a.whl");
}

namespace {

// Peak bytes a parse holds would need a hook into the allocator; the time a parse takes is a
// good stand-in for quadratic work, and these pages make quadratic code take minutes.
template <typename Parse>
double seconds_for(Parse&& parse) {
  const auto start = std::chrono::steady_clock::now();
  parse();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string repeated(std::string_view piece, size_t times) {
  std::string out;
  out.reserve(piece.size() * times);
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

}  // namespace

TEST_CASE("a PEP 691 page nested without end is refused at the nesting cap, as it is read") {
  for (const auto& body : {"{\"files\": [" + std::string(4 << 20, '[') + "]}",
                           "{\"files\": [{\"x\": " + repeated("{\"a\": ", 1 << 20) + "1}]}",
                           std::string(4 << 20, '[')}) {
    Result<std::vector<IndexFile>> files = std::vector<IndexFile>{};
    CHECK(seconds_for([&] { files = parse_simple_json(body, page); }) < 10);
    REQUIRE_FALSE(files.ok());
    CHECK(files.error().kind == ErrorKind::integrity);
    CHECK(files.error().message.find(page + ": not a PEP 691 project page") == 0);
  }
  const auto deep = parse_simple_json("{\"files\": [" + std::string(20, '[') + "]}", page);
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().message ==
        page + ": not a PEP 691 project page (nested deeper than 16 levels)");
  // What PyPI nests (metadata objects in a file) stays well inside the cap.
  const auto real = parse_simple_json(
      R"({"meta": {"api-version": "1.1"}, "files": [{"filename": "a.whl", "url": "a.whl",
          "core-metadata": {"sha256": "x"}, "data-dist-info-metadata": {"sha256": "x"},
          "hashes": {"sha256": ")" +
          std::string(64, 'b') + R"("}, "size": 12, "yanked": false}]})",
      page);
  REQUIRE(real.ok());
  REQUIRE(real->size() == 1);
  CHECK(real->front().size == 12);
  CHECK(real->front().sha256 == std::string(64, 'b'));
}

TEST_CASE("a PEP 691 file size must be a whole number of bytes up to 64 GiB") {
  const auto with_size = [](const std::string& size) {
    return R"({"files": [{"filename": "a.whl", "url": "a.whl"}, {"filename": "b.whl", "url": "b.whl", "size": )" +
           size + "}]}";
  };
  CHECK(parse_simple_json(with_size("68719476736"), page)->back().size == 68719476736ULL);
  CHECK(parse_simple_json(with_size("0"), page)->back().size == 0);
  for (const std::string bad : {"-5", "1.5", "1e9", "68719476737", "1180591620717411303424",
                                "\"12\"", "null", "true", "[1]", "{\"n\": 1}"}) {
    CAPTURE(bad);
    const auto files = parse_simple_json(with_size(bad), page);
    REQUIRE_FALSE(files.ok());
    CHECK(files.error().kind == ErrorKind::integrity);
    CHECK(files.error().message.find(page + ": files[1].size: ") == 0);
  }
}

TEST_CASE("hostile PEP 503 pages are read in one pass") {
  // Anchors that never close their tag, each of which once scanned (and copied) the rest of the
  // page: a million of them took hours. One pass takes well under a second, sanitizers included.
  for (const auto& body :
       {repeated("<a ", 1 << 20) + ">x</a>", repeated("<a href=x ", 1 << 18) + ">",
        "<a " + repeated("data-x=1 ", 1 << 18) + "href=y>y.whl</a>"}) {
    Result<std::vector<IndexFile>> files = std::vector<IndexFile>{};
    CHECK(seconds_for([&] { files = parse_simple_html(body, page); }) < 10);
    REQUIRE(files.ok());
    CHECK(files->size() <= 1);
  }
}

TEST_CASE("a page listing more files than any real project is refused, not cut") {
  CHECK(max_index_files == 200000);
  const auto html = parse_simple_html(repeated("<a href=a.whl>a.whl</a>", 11), page, 10);
  REQUIRE_FALSE(html.ok());
  CHECK(html.error().kind == ErrorKind::integrity);
  CHECK(html.error().message == page + ": lists more than 10 files");
  const auto json = parse_simple_json(
      "{\"files\": [" + repeated(R"({"filename": "a.whl", "url": "a.whl"},)", 11) + "{}]}", page,
      10);
  REQUIRE_FALSE(json.ok());
  CHECK(json.error().message == page + ": lists more than 10 files");
  CHECK(parse_simple_html(repeated("<a href=a.whl>a.whl</a>", 10), page, 10)->size() == 10);
  // Millions of tiny links: the first past the cap ends the parse.
  Result<std::vector<IndexFile>> many = std::vector<IndexFile>{};
  CHECK(seconds_for([&] {
          many = parse_simple_html(repeated("<a href=a>a</a>", 1 << 20), page, 10);
        }) < 10);
  CHECK_FALSE(many.ok());
}

TEST_CASE("wheel names: project, version and platform tags") {
  const auto wheel = parse_wheel_name(
      "nvidia_nvvm-13.0.88-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl");
  REQUIRE(wheel.has_value());
  CHECK(wheel->project == "nvidia-nvvm");
  CHECK(wheel->version == "13.0.88");
  CHECK(wheel_fits(*wheel, "linux-x86_64"));
  CHECK(!wheel_fits(*wheel, "linux-sbsa"));
  CHECK(!parse_wheel_name("nvidia_nvvm-13.0.88.tar.gz"));
  CHECK(!parse_wheel_name("a-b.whl"));
  CHECK(!wheel_fits(*parse_wheel_name("x-1-py3-none-win_amd64.whl"), "linux-x86_64"));
  CHECK(normalize_project_name("Nvidia_CUDA..nvcc") == "nvidia-cuda-nvcc");
}
