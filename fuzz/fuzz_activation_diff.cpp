// The CUDAENV_DIFF decoder: the variable comes from the environment, so any text may arrive.
// Decoding never crashes; what decodes re-encodes to a record that decodes the same; undoing it
// against an environment that holds what it recorded never crashes either, and changes no
// variable outside the managed list: a forged record can set nothing else.

#include <algorithm>
#include <string>

#include "activate/activation.hpp"
#include "fuzz_input.hpp"

using namespace cudaenv;

namespace {

bool same(const activate::Activation& a, const activate::Activation& b) {
  if (a.variables.size() != b.variables.size()) return false;
  for (std::size_t i = 0; i < a.variables.size(); ++i) {
    const auto& x = a.variables[i];
    const auto& y = b.variables[i];
    if (x.name != y.name || x.before != y.before || x.set_to != y.set_to || x.added != y.added)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = fuzz::as_text(data, size);
  const auto activation = activate::decode(text);
  Environment current({{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/u"}, {"EDITOR", "vi"}});
  current.set(activate::activation_variable, std::string(text));
  (void)activate::without_activation(current);
  if (!activation) return 0;
  const auto again = activate::decode(activate::encode(*activation));
  fuzz::require(again.has_value() && same(*again, *activation), "encode(decode(x)) decodes to x");
  for (const auto& change : activation->variables) current.set(change.name, change.set_to);
  const auto stores = activate::store_directories(current);
  const auto reverted = activate::revert(current, *activation, stores);
  const auto& managed = activate::managed_variables();
  for (const auto& [name, value] : activate::changes_between(current, reverted)) {
    (void)value;
    fuzz::require(std::find(managed.begin(), managed.end(), name) != managed.end(),
                  "revert changes only managed variables");
  }
  return 0;
}
