#include "modules/modulefile.hpp"

#include "core/text.hpp"
#include "modules/render.hpp"

namespace cudaenv::modules {

namespace {

bool quotable_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  static constexpr std::string_view allowed = " /._-+@,=~%";
  return allowed.find(c) != std::string_view::npos;
}

std::string file_name(const std::string& name, Format format) {
  return format == Format::lua ? name + ".lua" : name;
}

}  // namespace

Status check_quotable(const std::string& path) {
  for (const char c : path) {
    if (quotable_char(c)) continue;
    const auto shown = (c > ' ' && c < 127)
                           ? std::string("'") + c + "'"
                           : "byte " + std::to_string(static_cast<unsigned char>(c));
    return make_error(ErrorKind::usage,
                      "cannot write modulefiles for " + text::printable(path, text::message_limit) +
                          ": it holds " + shown + ", which a modulefile cannot carry safely",
                      "keep store paths to letters, digits, spaces and / . _ - + @ , = ~ % "
                      "(set CUDAENV_ROOT or the system store elsewhere)");
  }
  return Ok{};
}

std::string lua_string(const std::string& value) {
  std::string quoted = "\"";
  for (const char c : value) {
    if (c == '\\' || c == '"') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string tcl_word(const std::string& value) { return "{" + value + "}"; }

Result<std::vector<ModuleFile>> modulefiles(const ModuleSet& set, Format format) {
  std::vector<ModuleFile> files;
  for (const auto& toolkit : set.toolkits) {
    if (auto ok = check_quotable(toolkit.prefix); !ok) return ok.error();
    const auto text = format == Format::lua ? lua_toolkit(toolkit, set) : tcl_toolkit(toolkit, set);
    files.push_back({file_name("cuda/" + toolkit.version, format), text});
  }
  for (const auto& cudnn : set.cudnn) {
    if (auto ok = check_quotable(cudnn.prefix); !ok) return ok.error();
    const auto name = "cudnn/" + cudnn.version + "-cuda" + std::to_string(cudnn.cuda_major);
    const auto text = format == Format::lua ? lua_cudnn(cudnn, set) : tcl_cudnn(cudnn, set);
    files.push_back({file_name(name, format), text});
  }
  return files;
}

}  // namespace cudaenv::modules
