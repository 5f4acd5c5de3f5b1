#include "kernels/cpu.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <optional>
#include <atomic>
#include <cstdlib>
#include <string>

#include "util/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace parley {
namespace {

constexpr std::array<std::string_view, 5> kNames = {"scalar", "avx2", "avx512", "vnni", "amx"};

#if defined(__x86_64__) || defined(__i386__)
// AMX needs the CPUID bits (leaf 7: EDX 22 AMX-BF16, 24 AMX-TILE, 25 AMX-INT8)
// and the kernel's permission to use the large tile-data register state.
bool amx_usable() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const unsigned need = 1u << 22 | 1u << 24 | 1u << 25;
  if ((d & need) != need) return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

bool cpu_has(Isa isa) {
  __builtin_cpu_init();
  // The flags each path's files are compiled with (see CMakeLists.txt).
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512dq");
  const bool vnni = avx512 && __builtin_cpu_supports("avx512vnni");
  switch (isa) {
    case Isa::Scalar: return true;
    case Isa::Avx2: return avx2;
    case Isa::Avx512: return avx512;
    case Isa::Vnni: return vnni;
    case Isa::Amx: {
      // The tile files also use AVX512-BF16 and VBMI (every AMX CPU has them).
      static const bool amx = vnni && __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vbmi") &&
                              amx_usable();  // the permission request runs once
      return amx;
    }
  }
  return false;
}
#else
bool cpu_has(Isa isa) { return isa == Isa::Scalar; }
#endif

// -1: not chosen yet.
std::atomic<int> g_active{-1};

}  // namespace

bool isa_supported(Isa isa) {
  static const std::array<bool, 5> supported = [] {
    std::array<bool, 5> s{};
    for (size_t i = 0; i < s.size(); ++i) s[i] = cpu_has(Isa(i));
    return s;
  }();
  const auto i = size_t(isa);
  return i < supported.size() && supported[i];
}

bool has_avx512_bf16() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool bf16 = isa_supported(Isa::Avx512) && __builtin_cpu_supports("avx512bf16");
  return bf16;
#else
  return false;
#endif
}

bool has_gfni() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool gfni = isa_supported(Isa::Vnni) && __builtin_cpu_supports("gfni");
  return gfni;
#else
  return false;
#endif
}

Isa detect_isa() {
  for (int i = int(kNames.size()) - 1; i > 0; --i)
    if (isa_supported(Isa(i))) return Isa(i);
  return Isa::Scalar;
}

std::string_view isa_name(Isa isa) {
  const auto i = size_t(isa);
  return i < kNames.size() ? kNames[i] : "unknown";
}

std::optional<Isa> isa_from_name(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return Isa(i);
  return std::nullopt;
}

Isa isa_from_env(const char* value) {
  if (!value || !*value) return detect_isa();
  const auto isa = isa_from_name(value);
  if (!isa)
    throw Error("PARLEY_ISA=" + std::string(value) +
                ": unknown instruction set (expected scalar, avx2, avx512, vnni or amx)");
  if (!isa_supported(*isa))
    throw Error("PARLEY_ISA=" + std::string(value) + ": not supported by this CPU (best: " +
                std::string(isa_name(detect_isa())) + ")");
  return *isa;
}

Isa active_isa() {
  int isa = g_active.load(std::memory_order_relaxed);
  if (isa < 0) {
    isa = int(isa_from_env(std::getenv("PARLEY_ISA")));
    g_active.store(isa, std::memory_order_relaxed);
  }
  return Isa(isa);
}

void set_active_isa(Isa isa) {
  if (!isa_supported(isa))
    throw Error("instruction set " + std::string(isa_name(isa)) + " is not supported by this CPU");
  g_active.store(int(isa), std::memory_order_relaxed);
}

}  // namespace parley
