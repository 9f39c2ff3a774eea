/* accel-cbs: thread-local addresses through an ordinary call (tls.cpp). */
#ifndef ACCEL_CBS_TLS_H
#define ACCEL_CBS_TLS_H

#include <llvm/IR/Module.h>

namespace accel_cbs
{

/*
 * Make every use of a thread-local variable in module's functions take its
 * address from a call to a small noinline function; returns how many
 * variables it rewrote.
 */
unsigned launderThreadLocals(llvm::Module &module);

} // namespace accel_cbs

#endif
