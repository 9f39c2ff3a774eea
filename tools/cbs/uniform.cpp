/*
 * The divergence analysis of accel-cbs (see uniform.h): which values of a
 * step function may differ between the threads of a block. The rest are
 * uniform, and the pass keeps those that cross a barrier once per block,
 * so that the loop over the block's threads sees them as invariants.
 */
#include "uniform.h"

#include <llvm/Analysis/PostDominators.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <vector>

using namespace llvm;

namespace accel_cbs {

namespace {

/* Whether `inst` may give each thread its own value, whatever its operands. */
bool sourceOfDivergence(const Instruction &inst, const Argument *block)
{
    if (isa<AllocaInst>(inst))
        return true; /* each thread's slot: its address differs */
    if (auto *load = dyn_cast<LoadInst>(&inst))
        return !load->isSimple() || getUnderlyingObject(load->getPointerOperand()) != block;
    if (auto *call = dyn_cast<CallBase>(&inst)) {
        /* An intrinsic with no memory access (a min, a fma) is arithmetic. */
        return !isa<IntrinsicInst>(call) || !call->doesNotAccessMemory();
    }
    return inst.mayReadOrWriteMemory();
}

class Divergence {
  public:
    explicit Divergence(Function &step) : post_(step) {}

    void mark(const Value *value)
    {
        if (divergent_.insert(value).second)
            work_.push_back(value);
    }

    /* Spread what is marked to its users until nothing changes. */
    void spread()
    {
        while (!work_.empty()) {
            const Value *value = work_.back();
            work_.pop_back();
            for (const User *user : value->users()) {
                auto *inst = dyn_cast<Instruction>(user);
                if (inst == nullptr || divergent_.count(inst))
                    continue;
                if (inst->isTerminator() && inst->getNumSuccessors() > 1) {
                    divergent_.insert(inst);
                    markJoins(inst);
                } else if (!inst->isTerminator()) {
                    mark(inst);
                }
            }
        }
    }

    SmallPtrSet<const Value *, 32> take() { return std::move(divergent_); }

  private:
    /*
     * The phis that join paths a divergent `branch` separates: those of
     * the blocks reachable from it before its immediate post-dominator,
     * and of that post-dominator (none when a side returns: then every
     * block it reaches).
     */
    void markJoins(const Instruction *branch)
    {
        const BasicBlock *from = branch->getParent();
        const DomTreeNode *node = post_.getNode(from);
        const BasicBlock *join = nullptr;
        SmallPtrSet<const BasicBlock *, 32> seen;
        std::vector<const BasicBlock *> todo;

        if (node != nullptr && node->getIDom() != nullptr)
            join = node->getIDom()->getBlock();
        for (const BasicBlock *next : successors(from))
            todo.push_back(next);
        while (!todo.empty()) {
            const BasicBlock *bb = todo.back();
            todo.pop_back();
            if (!seen.insert(bb).second)
                continue;
            markPhis(bb);
            if (bb == join)
                continue;
            for (const BasicBlock *next : successors(bb))
                todo.push_back(next);
        }
    }

    void markPhis(const BasicBlock *bb)
    {
        for (const PHINode &phi : bb->phis())
            mark(&phi);
    }

    PostDominatorTree post_;
    SmallPtrSet<const Value *, 32> divergent_;
    std::vector<const Value *> work_;
};

} // namespace

SmallPtrSet<const Value *, 32> findDivergent(Function &step, unsigned block_arg,
                                             const SmallVectorImpl<unsigned> &thread_args)
{
    Divergence divergence(step);
    const Argument *block = step.getArg(block_arg);

    for (unsigned arg : thread_args)
        divergence.mark(step.getArg(arg));
    for (BasicBlock &bb : step) {
        for (Instruction &inst : bb) {
            if (sourceOfDivergence(inst, block))
                divergence.mark(&inst);
        }
    }
    divergence.spread();
    return divergence.take();
}

} // namespace accel_cbs
