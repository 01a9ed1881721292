#pragma once
// Iterating a container from its end: `for (const auto& r : reversed(releases))` walks newest
// first through lists kept oldest first. (std::views::reverse would do, but clang-tidy 14 cannot
// parse libstdc++ 12's ranges.)

namespace cudaenv {

template <typename Container>
class Reversed {
 public:
  explicit Reversed(const Container& container) : container_(container) {}
  auto begin() const { return container_.rbegin(); }
  auto end() const { return container_.rend(); }

 private:
  const Container& container_;
};

template <typename Container>
Reversed<Container> reversed(const Container& container) {
  return Reversed<Container>(container);
}

}  // namespace cudaenv
