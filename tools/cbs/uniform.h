/*
 * Which values of a kernel's step function are the same in every thread of
 * a block (uniform), for accel-cbs (accel_cbs.cpp): a divergence analysis
 * on the step as clang left it, before the pass splits it at its barriers.
 */
#ifndef ACCEL_CBS_UNIFORM_H
#define ACCEL_CBS_UNIFORM_H

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/Function.h>

namespace accel_cbs
{

/*
 * The values of `step` that may differ between the threads of a block:
 * seeded by its thread arguments (the indices in `thread_args`), by every
 * read of memory but the block descriptor's (argument `block_arg`), by
 * calls and by allocas (each thread has its own); spread through operands,
 * and to the phis that join the two sides of a divergent branch (every phi
 * between the branch and its immediate post-dominator, which covers a loop
 * that threads leave after different trips). A conditional branch or
 * switch is in the set when its condition is.
 */
llvm::SmallPtrSet<const llvm::Value *, 32>
findDivergent(llvm::Function &step, unsigned block_arg,
              const llvm::SmallVectorImpl<unsigned> &thread_args);

} // namespace accel_cbs

#endif
