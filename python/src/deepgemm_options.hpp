// DeepGEMM's keyword arguments that fgemm accepts so that code written for DeepGEMM runs unchanged: each
// value that means what fgemm does is accepted, any other is refused, never silently ignored.
#pragma once

#include <nanobind/nanobind.h>

#include "fgemm/fgemm.hpp"

namespace fgemm::python {

struct DeepGemmOptions {
  nanobind::handle recipe;    // None, (1, 128, 128) (1D2D: 1x128 scales for A, 128x128 for B) or (1, 1, 128) (1D1D)
  nanobind::handle recipe_a;  // None or (1, 128)
  nanobind::handle recipe_b;  // None, (128, 128) or (1, 128) (1D1D)
  nanobind::handle compiled_dims;       // any string: fgemm compiles every dimension into its kernels
  nanobind::handle disable_ue8m0_cast;  // True or False: on Hopper neither casts the FP32 scales
};

// Looks up the accepted values; called once, when the module is imported.
void init_deepgemm_options();

// Throws fgemm::Error (ValueError or TypeError in Python) naming the first option fgemm cannot honour (1D1D
// only where the operation takes it, `takes_1d1d`). Returns the granularity of B's scales along N that the
// recipe names: 128 (1D2D), 1 (1D1D), or 0 where none is named (the scales' shape decides).
int check_deepgemm_options(const DeepGemmOptions& options, const char* op, bool takes_1d1d = false);

// sfb's rows against the recipe's granularity (0: any), so that a recipe given never disagrees with the scales.
void check_scales_of_recipe(int granularity, const TensorView& b, const TensorView& sfb, const char* op);

// compiled_dims alone (the 16-bit GEMMs have no recipes or scales): any str, a TypeError otherwise.
void check_compiled_dims(nanobind::handle compiled_dims, const char* op);

// The contiguous layout's form of grouped_layout from DeepGEMM's use_psum_layout, which must be a bool:
// True for the prefix sums of the groups' rows, False for one group index per row.
ContiguousLayout contiguous_layout_form(nanobind::handle use_psum_layout, const char* op);

}  // namespace fgemm::python
