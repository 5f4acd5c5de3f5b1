#pragma once
// Instruction-set selection at run time (CPUID), overridable with
// PARLEY_ISA=scalar|avx2|avx512|vnni|amx (a path the CPU lacks is an error).
#include <optional>
#include <string_view>

namespace parley {

enum class Isa { Scalar = 0, Avx2 = 1, Avx512 = 2, Vnni = 3, Amx = 4 };

Isa detect_isa();            // the best path this CPU supports
Isa active_isa();            // PARLEY_ISA if set, else detect_isa(); cached
void set_active_isa(Isa);    // for tests comparing paths; must be supported
bool isa_supported(Isa);
// Whether the active path has AVX2 (every path but the scalar reference).
inline bool use_avx2() { return active_isa() != Isa::Scalar; }
// AVX512-BF16 (vdpbf16ps), used by the AVX-512 paths for BF16 weights.
bool has_avx512_bf16();
// GFNI (vgf2p8affineqb) beside AVX512-VNNI, used by the packed Q3_K tiles.
bool has_gfni();
std::string_view isa_name(Isa);

// "scalar", "avx2", ... (isa_name's inverse); nullopt for other names.
std::optional<Isa> isa_from_name(std::string_view name);
// The choice PARLEY_ISA=value makes: null or empty -> detect_isa(); throws
// parley::Error for an unknown name or a path this CPU lacks.
Isa isa_from_env(const char* value);

}  // namespace parley
