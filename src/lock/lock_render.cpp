// Writing .cudaenv.lock: the struct as a toml++ table, formatted by toml++ (every string quoted
// and escaped by the library), and the digest receipts are checked against.
#include <array>
#include <sstream>

#include <openssl/evp.h>
#include <toml++/toml.h>

#include "core/files.hpp"
#include "core/safe_write.hpp"
#include "lock/lock_file.hpp"

namespace cudaenv::lock {

namespace {

toml::array archive_tables(const std::vector<LockedArchive>& archives) {
  toml::array list;
  for (const auto& a : archives) {
    list.push_back(toml::table{{"name", a.name},
                               {"version", a.version},
                               {"relative_path", a.relative_path},
                               {"sha256", a.sha256},
                               {"size", static_cast<std::int64_t>(a.size)}});
  }
  return list;
}

toml::array wheel_tables(const std::vector<LockedWheel>& wheels) {
  toml::array list;
  for (const auto& w : wheels) {
    toml::table one{{"filename", w.filename}};
    if (!w.sha256.empty()) one.insert("sha256", w.sha256);
    list.push_back(std::move(one));
  }
  return list;
}

toml::array strings(const std::vector<std::string>& values) {
  toml::array list;
  for (const auto& v : values) list.push_back(v);
  return list;
}

toml::table target_table(const LockedTarget& t) {
  toml::table table{{"driver", t.driver},
                    {"mode", t.mode},
                    {"arch", strings(t.archs)},
                    {"TORCH_CUDA_ARCH_LIST", t.torch_cuda_arch_list},
                    {"CMAKE_CUDA_ARCHITECTURES", t.cmake_cuda_architectures}};
  if (!t.gpus.empty()) table.insert("gpu", strings(t.gpus));
  if (!t.cudahostcxx.empty()) table.insert("CUDAHOSTCXX", t.cudahostcxx);
  if (t.verified.empty()) return table;
  toml::array receipts;
  for (const auto& r : t.verified) {
    receipts.push_back(toml::table{{"date", r.date},
                                   {"gpu", r.gpu},
                                   {"arch", r.arch},
                                   {"driver", r.driver},
                                   {"toolkit", r.toolkit},
                                   {"report_sha256", r.report_sha256},
                                   {"locked_set", r.locked_set}});
  }
  table.insert("verified", std::move(receipts));
  return table;
}

toml::table as_table(const LockFile& lock) {
  toml::table root{
      {"lock_version", lock.lock_version},
      {"database",
       toml::table{{"revision", lock.database_revision}, {"sha256", lock.database_sha256}}},
      {"toolkit", toml::table{{"version", lock.toolkit.version},
                              {"components", archive_tables(lock.toolkit.components)}}}};
  if (!lock.generated_by.empty()) root.insert("generated_by", lock.generated_by);
  // Written only for an index, so that locks of NVIDIA's archives keep their text and digest.
  if (lock.source != redist_source) root.insert("source", lock.source);
  toml::table request;
  for (const auto& [key, value] : lock.request) request.insert(key, value);
  if (!request.empty()) root.insert("request", std::move(request));
  if (lock.cudnn)
    root.insert("cudnn", toml::table{{"version", lock.cudnn->version},
                                     {"cuda_variant", lock.cudnn->cuda_variant},
                                     {"components", archive_tables(lock.cudnn->components)}});
  toml::table frameworks;
  for (const auto& [name, f] : lock.frameworks) {
    toml::table one{{"version", f.version}, {"pip", f.pip}};
    if (!f.index_url.empty()) one.insert("index_url", f.index_url);
    if (!f.wheels.empty()) one.insert("wheels", wheel_tables(f.wheels));
    if (!f.companion_of.empty()) one.insert("companion_of", f.companion_of);
    frameworks.insert(name, std::move(one));
  }
  if (!frameworks.empty()) root.insert("frameworks", std::move(frameworks));
  toml::table targets;
  for (const auto& [name, t] : lock.targets) targets.insert(name, target_table(t));
  if (!targets.empty()) root.insert("targets", std::move(targets));
  return root;
}

}  // namespace

std::string sha256_text(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr);
  static const char* const hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 0xf];
  }
  return out;
}

std::string render_lock_file(const LockFile& lock) {
  std::ostringstream out;
  out << "# Written by `cudaenv lock` from .cudaenv: the set every declared target runs.\n"
         "# Commit it; `cudaenv sync` installs exactly this, `cudaenv lock --check` says when it\n"
         "# is stale. Do not edit by hand.\n\n"
      << toml::toml_formatter{as_table(lock)} << "\n";
  return out.str();
}

Status write_lock_file(const std::filesystem::path& path, const LockFile& lock) {
  return write_file_atomically(path, render_lock_file(lock));
}

std::string set_digest(const LockFile& lock) {
  LockFile pinned = lock;
  pinned.generated_by.clear();
  pinned.request.clear();
  for (auto& [name, target] : pinned.targets) target.verified.clear();
  std::ostringstream out;
  out << toml::toml_formatter{as_table(pinned)};
  return sha256_text(out.str());
}

}  // namespace cudaenv::lock
