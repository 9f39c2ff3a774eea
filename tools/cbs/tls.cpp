/*
 * Thread-local addresses through an ordinary call.
 *
 * A static shared array is a _Thread_local array (<accel/kernel.h>), and an
 * image loaded with dlopen reaches it through __tls_get_addr. LLVM 14's
 * x86-64 backend models that call (the TLS_addr64 pseudo) as clobbering
 * only xmm0-15 and the general registers, yet __tls_get_addr's slow path,
 * the first access from a host thread, calls malloc and glibc's EVEX
 * memset/memcpy, which use ymm16-31 and the mask registers. Where a
 * thread loop the pass made is vectorised for AVX-512 and touches a shared
 * array, clang keeps vectors in ymm16-31 across that call, and they come
 * back overwritten: stencil_2d_tiled's halo gather faulted that way under
 * MALLOC_PERTURB_ (malloc's perturb memset), BENCHMARKS.md has the
 * evidence. An ordinary call clobbers every vector and mask register, so
 * each use takes the address from one: a noinline function, readnone and
 * speculatable so that LICM hoists it out of the thread loops, whose result
 * an empty asm hides from IPSCCP (which would fold it back to the global).
 */
#include "tls.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

using namespace llvm;

namespace accel_cbs {
namespace {

Function *addressFunction(GlobalVariable &var)
{
    Module &module = *var.getParent();
    PointerType *type = var.getType();
    Function *fn = Function::Create(FunctionType::get(type, false), GlobalValue::InternalLinkage,
                                    "accel__cbs_tls." + var.getName(), module);
    fn->addFnAttr(Attribute::NoInline);
    fn->addFnAttr(Attribute::NoUnwind);
    fn->addFnAttr(Attribute::WillReturn);
    fn->setDoesNotAccessMemory(); /* readnone; memory(none) from LLVM 16 */
    fn->addFnAttr(Attribute::Speculatable);
    IRBuilder<> b(BasicBlock::Create(module.getContext(), "", fn));
    InlineAsm *opaque = InlineAsm::get(FunctionType::get(type, {type}, false), "", "=r,0", false);
#if LLVM_VERSION_MAJOR >= 16
    /* From LLVM 16 a thread-local's address is taken through an intrinsic. */
    Value *tls = b.CreateThreadLocalAddress(&var);
#else
    Value *tls = &var;
#endif
    b.CreateRet(b.CreateCall(opaque, {tls}));
    return fn;
}

bool mentions(const Value *value, const GlobalVariable &var)
{
    if (value == &var)
        return true;
    auto *expr = dyn_cast<ConstantExpr>(value);
    if (expr == nullptr)
        return false;
    for (const Use &op : expr->operands()) {
        if (mentions(op.get(), var))
            return true;
    }
    return false;
}

/* `value` with var replaced by address, constant expressions made instructions before `at`. */
Value *rebuild(Value *value, const GlobalVariable &var, Value *address, Instruction *at)
{
    if (value == &var)
        return address;
    if (!mentions(value, var))
        return value;
    /* Inserted apart: later LLVMs dropped getAsInstruction's insertion point. */
    Instruction *inst = cast<ConstantExpr>(value)->getAsInstruction();
    inst->insertBefore(at);
    for (unsigned i = 0; i < inst->getNumOperands(); i++)
        inst->setOperand(i, rebuild(inst->getOperand(i), var, address, inst));
    return inst;
}

/* A call of llvm.threadlocal.address (LLVM 16 and later) on `var`. */
bool takesAddressOf(const Instruction &inst, const GlobalVariable &var)
{
#if LLVM_VERSION_MAJOR >= 16
    auto *intrinsic = dyn_cast<IntrinsicInst>(&inst);
    return intrinsic != nullptr &&
           intrinsic->getIntrinsicID() == Intrinsic::threadlocal_address &&
           intrinsic->getArgOperand(0) == &var;
#else
    (void)inst;
    (void)var;
    return false;
#endif
}

void rewriteUses(GlobalVariable &var, Function *address)
{
    SmallVector<std::pair<Instruction *, unsigned>, 16> uses;
    SmallVector<Instruction *, 16> intrinsics;
    for (Function &fn : *var.getParent()) {
        if (&fn == address)
            continue;
        for (BasicBlock &bb : fn) {
            for (Instruction &inst : bb) {
                if (takesAddressOf(inst, var)) {
                    intrinsics.push_back(&inst);
                    continue;
                }
                for (unsigned i = 0; i < inst.getNumOperands(); i++) {
                    if (mentions(inst.getOperand(i), var))
                        uses.push_back({&inst, i});
                }
            }
        }
    }
    for (auto &use : uses) {
        Instruction *inst = use.first;
        unsigned i = use.second;
        auto *phi = dyn_cast<PHINode>(inst);
        Instruction *at = phi != nullptr ? phi->getIncomingBlock(i)->getTerminator() : inst;
        CallInst *call = CallInst::Create(address, "cbs.tls", at);
        inst->setOperand(i, rebuild(inst->getOperand(i), var, call, at));
    }
    /* The intrinsic's result is the address: the call takes its place. */
    for (Instruction *inst : intrinsics) {
        CallInst *call = CallInst::Create(address, "cbs.tls", inst);
        inst->replaceAllUsesWith(call);
        inst->eraseFromParent();
    }
}

} // namespace

unsigned launderThreadLocals(Module &module)
{
    SmallVector<GlobalVariable *, 8> vars;
    for (GlobalVariable &var : module.globals()) {
        if (var.isThreadLocal())
            vars.push_back(&var);
    }
    for (GlobalVariable *var : vars)
        rewriteUses(*var, addressFunction(*var));
    return (unsigned)vars.size();
}

} // namespace accel_cbs
