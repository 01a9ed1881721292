#include "core/sysroot.hpp"

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/files.hpp"
#include "core/text.hpp"

namespace cudaenv {

namespace fs = std::filesystem;

namespace {

// Linux gives up after 40 links (ELOOP); so do we.
constexpr int max_link_hops = 40;

std::vector<std::string> path_components(const std::string& path) {
  std::vector<std::string> parts;
  for (auto& part : text::split(path, '/')) {
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
  }
  return parts;
}

std::string join_components(const std::vector<std::string>& parts) {
  std::string path;
  for (const auto& part : parts) path += "/" + part;
  return path.empty() ? "/" : path;
}

}  // namespace

Sysroot::Sysroot(fs::path root) : root_(root.empty() ? fs::path("/") : std::move(root)) {
  // "/srv/machine/" and "/srv/machine" name the same root.
  if (root_ != "/" && !root_.has_filename()) root_ = root_.parent_path();
}

fs::path Sysroot::host_path(const std::string& machine_path) const {
  if (is_host_root()) return machine_path.empty() ? fs::path("/") : fs::path(machine_path);
  std::string relative = machine_path;
  while (!relative.empty() && relative.front() == '/') relative.erase(0, 1);
  return root_ / relative;
}

std::string Sysroot::machine_path(const fs::path& host) const {
  if (is_host_root()) return host.string();
  const auto relative = host.lexically_relative(root_);
  if (relative.empty() || *relative.begin() == "..") return host.string();
  return "/" + relative.string();
}

std::optional<std::string> Sysroot::read_file(const std::string& machine_path) const {
  // Resolve inside the root first: letting the host follow an absolute link would escape it.
  const auto chain = resolve(machine_path);
  if (!chain.exists) return std::nullopt;
  std::ifstream in(host_path(chain.target), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return content.str();
}

std::optional<std::string> Sysroot::read_bounded(const std::string& machine_path,
                                                 size_t limit) const {
  const auto chain = resolve(machine_path);
  if (!chain.exists) return std::nullopt;
  auto text = read_bounded_file(host_path(chain.target), limit);
  if (!text) return std::nullopt;
  return std::move(*text);
}

std::optional<std::string> Sysroot::read_tail(const std::string& machine_path, size_t bytes) const {
  const auto chain = resolve(machine_path);
  if (!chain.exists) return std::nullopt;
  std::ifstream in(host_path(chain.target), std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const auto size = static_cast<size_t>(in.tellg());
  const auto start = size > bytes ? size - bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string tail(size - start, '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  if (!in) return std::nullopt;
  return tail;
}

bool Sysroot::exists(const std::string& machine_path) const { return resolve(machine_path).exists; }

bool Sysroot::is_directory(const std::string& machine_path) const {
  const auto chain = resolve(machine_path);
  std::error_code ec;
  return chain.exists && fs::is_directory(host_path(chain.target), ec);
}

bool Sysroot::is_executable_file(const std::string& machine_path) const {
  const auto chain = resolve(machine_path);
  if (!chain.exists) return false;
  const auto host = host_path(chain.target);
  std::error_code ec;
  return fs::is_regular_file(host, ec) && ::access(host.c_str(), X_OK) == 0;
}

bool Sysroot::is_symlink(const std::string& machine_path) const {
  std::error_code ec;
  return fs::is_symlink(host_path(machine_path), ec);
}

std::vector<std::string> Sysroot::list_directory(const std::string& machine_path) const {
  std::vector<std::string> names;
  const auto chain = resolve(machine_path);
  if (!chain.exists) return names;
  std::error_code ec;
  for (fs::directory_iterator it(host_path(chain.target), ec), end; !ec && it != end;
       it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

LinkChain Sysroot::resolve(const std::string& machine_path) const {
  LinkChain chain;
  std::deque<std::string> todo;
  for (auto& part : path_components(machine_path)) todo.push_back(std::move(part));
  std::vector<std::string> resolved;
  chain.hops.push_back(join_components({todo.begin(), todo.end()}));
  int hops = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == "..") {
      if (!resolved.empty()) resolved.pop_back();
      continue;
    }
    resolved.push_back(std::move(part));
    const auto host = host_path(join_components(resolved));
    std::error_code ec;
    if (!fs::is_symlink(host, ec)) continue;
    const auto target = fs::read_symlink(host, ec).string();
    if (ec || ++hops > max_link_hops) return chain;  // unreadable or a loop: not found
    resolved.pop_back();
    if (!target.empty() && target.front() == '/') resolved.clear();
    const auto target_parts = path_components(target);
    todo.insert(todo.begin(), target_parts.begin(), target_parts.end());
    auto hop = resolved;
    hop.insert(hop.end(), todo.begin(), todo.end());
    chain.hops.push_back(fs::path(join_components(hop)).lexically_normal().string());
  }
  chain.target = join_components(resolved);
  std::error_code ec;
  chain.exists = fs::exists(host_path(chain.target), ec);
  return chain;
}

std::optional<std::string> Sysroot::canonical(const std::string& machine_path) const {
  auto chain = resolve(machine_path);
  if (!chain.exists) return std::nullopt;
  return chain.target;
}

}  // namespace cudaenv
