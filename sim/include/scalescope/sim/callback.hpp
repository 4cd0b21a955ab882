// Callback: a move-only, type-erased void() callable with 48 bytes of inline storage, used for
// engine events so that scheduling a small lambda never allocates.
#pragma once

#include <cassert>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace scalescope {

class Callback;

/// What a Callback can be made from: anything callable with no arguments, other than a Callback.
template <class F>
concept CallableTarget =
    !std::is_same_v<std::decay_t<F>, Callback> && std::is_invocable_v<std::decay_t<F>&>;

/// Holds any callable `void()` (lambda, function object, std::function, ...). Callables of at
/// most kInlineBytes bytes with a noexcept move constructor are stored in place; larger ones
/// are allocated on the heap. Move-only, so callables may own move-only state.
class Callback {
 public:
  static constexpr std::size_t kInlineBytes = 48;

  Callback() noexcept = default;
  Callback(std::nullptr_t) noexcept {}  // NOLINT(google-explicit-constructor)

  // NOLINTNEXTLINE(google-explicit-constructor): lambdas convert implicitly
  template <CallableTarget F>
  Callback(F&& fn) {
    construct<std::decay_t<F>>(std::forward<F>(fn));
  }

  Callback(Callback&& other) noexcept { take(other); }
  Callback& operator=(Callback&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;
  ~Callback() { reset(); }

  /// Replaces the held callable by `fn`, constructed in place.
  template <class F>
  void emplace(F&& fn) {
    using D = std::decay_t<F>;
    if constexpr (std::is_same_v<D, Callback>) {
      *this = std::move(fn);
    } else {
      static_assert(std::is_invocable_v<D&>, "Callback needs a callable taking no arguments");
      reset();
      construct<D>(std::forward<F>(fn));
    }
  }

  void reset() noexcept {
    if (ops_ != nullptr) {
      if (ops_->destroy != nullptr) ops_->destroy(buf_);
      ops_ = nullptr;
    }
  }
  explicit operator bool() const noexcept { return ops_ != nullptr; }
  void operator()() {
    assert(ops_ != nullptr && "calling an empty Callback");
    ops_->invoke(buf_);
  }

 private:
  struct Ops {
    void (*invoke)(void*);
    void (*relocate)(void* from, void* to) noexcept;  // move-construct at `to`, destroy `from`
    void (*destroy)(void*) noexcept;                  // null when there is nothing to do
  };

  template <class D>
  static constexpr bool kStoredInline =
      sizeof(D) <= kInlineBytes &&
      alignof(D) <= alignof(std::max_align_t) && std::is_nothrow_move_constructible_v<D>;

  template <class D>
  struct InlineOps {
    static D* get(void* p) { return std::launder(static_cast<D*>(p)); }
    static void invoke(void* p) { (*get(p))(); }
    static void relocate(void* from, void* to) noexcept {
      D* f = get(from);
      ::new (to) D(std::move(*f));
      f->~D();
    }
    static void destroy(void* p) noexcept { get(p)->~D(); }
    static constexpr Ops ops{&invoke, &relocate,
                             std::is_trivially_destructible_v<D> ? nullptr : &destroy};
  };

  template <class D>
  struct HeapOps {
    static D* get(void* p) { return *std::launder(static_cast<D**>(p)); }
    static void invoke(void* p) { (*get(p))(); }
    static void relocate(void* from, void* to) noexcept { ::new (to) D*(get(from)); }
    static void destroy(void* p) noexcept { delete get(p); }
    static constexpr Ops ops{&invoke, &relocate, &destroy};
  };

  template <class D, class F>
  void construct(F&& fn) {
    if constexpr (kStoredInline<D>) {
      ::new (static_cast<void*>(buf_)) D(std::forward<F>(fn));
      ops_ = &InlineOps<D>::ops;
    } else {
      ::new (static_cast<void*>(buf_)) D*(new D(std::forward<F>(fn)));
      ops_ = &HeapOps<D>::ops;
    }
  }

  void take(Callback& other) noexcept {
    if (other.ops_ != nullptr) {
      other.ops_->relocate(other.buf_, buf_);
      ops_ = other.ops_;
      other.ops_ = nullptr;
    }
  }

  alignas(std::max_align_t) unsigned char buf_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace scalescope
