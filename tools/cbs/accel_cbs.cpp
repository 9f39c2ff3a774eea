/*
 * accel-cbs: an LLVM 14 pass plugin that turns the threads of a CPU kernel
 * block into loops between the kernel's barriers (loop fission at
 * barriers, as PoCL's work-item loops, CuPBoP/COX and AdaptiveCpp's CBS
 * do), so that a block with barriers runs as a few loops over its threads
 * rather than a fiber switch per thread per barrier.
 *
 * accel-cc runs it on the IR of a kernel source compiled with
 * ACCEL__CPU_CBS (see <accel/kernel.h>): clang -O2 -emit-llvm, then
 * `opt -load-pass-plugin=accel-cbs.so -passes=accel-cbs`, then clang -O3.
 * For each kernel NAME the header gives three functions, kept whole by
 * `used`:
 *
 *   accel__cbs_step_NAME(block, x, y, z, rank, resume, scratch, threads, params...)
 *       one thread, from its start; barriers are calls to accel__cbs_barrier
 *   accel__cbs_region_NAME(block, resume, scratch, results, params...)
 *       a loop over the block's threads calling step
 *   accel__cbs_run_NAME(block, args, scratch)
 *       calls region until every thread returned; the kernel's run_regions
 *
 * The pass numbers the barriers of step 1..B and makes step a resumable
 * function: a new entry switches on `resume` to the start (0) or to the
 * point after barrier k, and barrier k becomes `return k`. A value computed
 * before a barrier and used after it (one whose definition no longer
 * dominates the use) is kept in the thread's slot of a per-thread array in
 * scratch (structure of arrays: slot s of thread t at scratch + base +
 * threads * offset_s + t * size_s, so that the threads' loop reads
 * consecutive elements and vectorises); so is every alloca. A value the
 * same in every thread of the block (uniform.cpp) is kept once per block
 * instead, in two cells before `base` (read from the first, written to the
 * second, which run copies to the first after each region), so that the
 * thread loop reads it as an invariant and a loop or branch on it (a tree
 * reduction's stride) runs around the thread loops after clang's
 * unswitching. A region that no divergent branch can send to two different
 * barriers returns what the threads said without checking that they
 * agree. Every use of a thread-local (a static shared array) takes its
 * address from an ordinary call (tls.cpp: clang 14 keeps AVX-512 vectors
 * across __tls_get_addr, which clobbers them). What only reads the block
 * descriptor, or is arithmetic on the arguments (an address in a shared
 * array, say), moves to the new entry and is recomputed rather than
 * stored. Then region is cloned once per resume
 * point with `resume` a constant, and run calls the clone its `resume`
 * names: after the inliner, each clone is the loop over the block's threads
 * of one region of the kernel, with the dead regions folded away.
 *
 * A kernel the pass cannot take keeps the fiber path: one with an indirect
 * call (a warp operation calls the plugin's runtime through a pointer; they
 * are not split), a call to a function the image defines (a call stack
 * whose depth the fiber's guard page watches), a dynamic alloca, or more
 * than ACCEL_CBS_MAX_BARRIERS barriers. Its descriptor's run_regions stays
 * NULL and its three functions are dropped.
 */
#include "tls.h"
#include "uniform.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/CFG.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/PassPlugin.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/Alignment.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <string>
#include <vector>

using namespace llvm;

namespace {

/* An i8 pointer: i8* up to LLVM 16, the opaque ptr after (getInt8PtrTy went in 18). */
Type *bytePointer(IRBuilder<> &b)
{
    return PointerType::getUnqual(b.getInt8Ty());
}

/* What <accel/kernel.h> names (ACCEL__CBS_FUNCTIONS, the descriptor). */
const char STEP_PREFIX[] = "accel__cbs_step_";
const char REGION_PREFIX[] = "accel__cbs_region_";
const char RUN_PREFIX[] = "accel__cbs_run_";
const char DESCRIPTOR_PREFIX[] = "accel_cpu_kernel_";
const char BARRIER_NAME[] = "accel__cbs_barrier";

/* step's arguments before the kernel's parameters, in order. */
enum StepArg { STEP_BLOCK, STEP_X, STEP_Y, STEP_Z, STEP_RANK, STEP_RESUME, STEP_SCRATCH,
               STEP_THREADS, STEP_FIXED };
/* region's `resume` and `scratch` arguments. */
const unsigned REGION_RESUME = 1;
const unsigned REGION_SCRATCH = 2;
/* The descriptor's fields (struct accel_cpu_kernel, ABI 3). */
const unsigned DESC_RUN_REGIONS = 8;
const unsigned DESC_THREAD_BYTES = 9;
const unsigned DESC_FIELDS = 10;

/* run_regions reports barrier numbers in 16 bits (ACCEL_CPU_REGIONS_DISAGREE). */
const unsigned ACCEL_CBS_MAX_BARRIERS = 0xfffe;
/* run keeps the results array before the slots: 4 bytes a thread. */
const uint64_t RESULT_BYTES = 4;

/* The functions and descriptor of one kernel. */
struct Kernel {
    std::string name;
    Function *step = nullptr;
    Function *region = nullptr;
    Function *run = nullptr;
    GlobalVariable *descriptor = nullptr;
};

/* A per-thread array in scratch. */
struct Slot {
    Type *type;
    uint64_t stride; /* bytes between two threads' elements */
    uint64_t offset; /* the array starts at scratch + base + threads * offset */
};

/* What splitting a step gave: the scratch it needs, and its regions. */
struct Split {
    uint64_t thread_bytes = 0;  /* scratch per thread, per-thread slots */
    uint64_t uniform_bytes = 0; /* one block's uniform cells, each copy */
    /* Per resume point: whether every branch up to the next barrier is uniform. */
    std::vector<bool> uniform_reach;
};

/* The values of one step that may differ between threads (uniform.h). */
using Divergent = SmallPtrSet<const Value *, 32>;

bool isBarrier(const CallBase *call)
{
    const Function *callee = call->getCalledFunction();

    return callee != nullptr && callee->getName() == BARRIER_NAME;
}

/*
 * Why step cannot be split, or "" when it can. barriers gets the barrier
 * calls in the order of the function's blocks.
 */
std::string stepRefusal(Function &step, std::vector<CallInst *> &barriers)
{
    for (BasicBlock &bb : step) {
        for (Instruction &inst : bb) {
            if (auto *alloca = dyn_cast<AllocaInst>(&inst)) {
                if (!alloca->isStaticAlloca())
                    return "a variable-length array";
                continue;
            }
            auto *call = dyn_cast<CallBase>(&inst);
            if (call == nullptr)
                continue;
            if (isa<InvokeInst>(call) || isa<CallBrInst>(call))
                return "an invoke";
            if (call->isInlineAsm())
                continue;
            if (isBarrier(call)) {
                barriers.push_back(cast<CallInst>(call));
                continue;
            }
            Function *callee = call->getCalledFunction();
            if (callee == nullptr)
                return "an indirect call (a warp operation)";
            if (callee->getIntrinsicID() == Intrinsic::stacksave)
                return "a variable-length array";
            if (callee->hasFnAttribute(Attribute::ReturnsTwice))
                return "setjmp";
            if (!callee->isDeclaration())
                return "a call to " + callee->getName().str() +
                       " (its stack stays on a fiber, whose guard page watches it)";
        }
    }
    if (barriers.empty())
        return "no barrier";
    if (barriers.size() > ACCEL_CBS_MAX_BARRIERS)
        return "more barriers than run_regions can number";
    return "";
}

/* Whether `value` is available in the new entry block `entry`. */
bool availableIn(const Value *value, const BasicBlock *entry)
{
    if (isa<Constant>(value) || isa<Argument>(value))
        return true;
    auto *inst = dyn_cast<Instruction>(value);
    return inst != nullptr && inst->getParent() == entry;
}

/*
 * Whether `inst` may move to the new entry:
 * arithmetic on what is there already, or a plain read of the block
 * descriptor, which does not change while the block runs.
 */
bool hoistable(Instruction &inst, const BasicBlock *entry, const Argument *block)
{
    if (isa<PHINode>(inst) || isa<AllocaInst>(inst) || inst.isTerminator())
        return false;
    for (const Use &operand : inst.operands()) {
        if (!availableIn(operand.get(), entry))
            return false;
    }
    if (auto *load = dyn_cast<LoadInst>(&inst))
        return load->isSimple() && getUnderlyingObject(load->getPointerOperand()) == block;
    return !inst.mayReadOrWriteMemory() && isSafeToSpeculativelyExecute(&inst);
}

/* Place slot: its offset after `*bytes`, which grows by threads' worth of it. */
Slot makeSlot(Type *type, uint64_t size, uint64_t align, uint64_t *bytes)
{
    /* 16-byte aligned arrays (64 for stricter types): scratch is 64-aligned. */
    uint64_t base_align = align > 16 ? 64 : 16;
    Slot slot;

    slot.type = type;
    slot.stride = alignTo(size, align);
    slot.offset = alignTo(*bytes, base_align);
    *bytes = slot.offset + slot.stride;
    return slot;
}

/* The address of thread `rank`'s element of `slot`, built in the new entry. */
Value *slotAddress(IRBuilder<> &b, const Slot &slot, Value *scratch, Value *threads,
                   Value *rank, uint64_t base)
{
    Value *offset = b.CreateAdd(b.CreateMul(threads, b.getInt64(slot.offset)),
                                b.CreateMul(rank, b.getInt64(slot.stride)));
    Value *byte = b.CreateInBoundsGEP(b.getInt8Ty(), scratch,
                                      b.CreateAdd(offset, b.getInt64(base)));

    return b.CreatePointerCast(byte, slot.type->getPointerTo());
}

/* The address of the block's cell at `offset` in scratch. */
Value *cellAddress(IRBuilder<> &b, Type *type, Value *scratch, uint64_t offset)
{
    Value *byte = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), scratch, offset);

    return b.CreatePointerCast(byte, type->getPointerTo());
}

/* Where `use` reads its value: before its user, or a phi's incoming edge. */
Instruction *loadPoint(Use &use)
{
    auto *user = cast<Instruction>(use.getUser());

    if (auto *phi = dyn_cast<PHINode>(user))
        return phi->getIncomingBlock(use)->getTerminator();
    return user;
}

/*
 * Whether a thread may run `to` after `from` within one region (the
 * step is split: each barrier is a return, so any path is barrier-free).
 */
bool reachesInRegion(const Instruction *from, const Instruction *to)
{
    const BasicBlock *start = from->getParent();
    SmallPtrSet<const BasicBlock *, 32> seen;
    std::vector<const BasicBlock *> todo(succ_begin(start), succ_end(start));

    if (to->getParent() == start && from->comesBefore(to))
        return true;
    while (!todo.empty()) {
        const BasicBlock *bb = todo.back();
        todo.pop_back();
        if (bb == to->getParent())
            return true;
        if (seen.insert(bb).second)
            todo.insert(todo.end(), succ_begin(bb), succ_end(bb));
    }
    return false;
}

/*
 * Keep `inst` in `store_address` after it and read it from `load_address`
 * at each use it does not dominate (the same address for a per-thread
 * slot; a uniform value's two cells otherwise, see moveToSlots).
 */
void demote(Instruction *inst, Value *store_address, Value *load_address,
            const std::vector<Use *> &far_uses, const DataLayout &layout)
{
    Align align = layout.getABITypeAlign(inst->getType());
    Instruction *after = isa<PHINode>(inst) ? &*inst->getParent()->getFirstInsertionPt()
                                            : inst->getNextNode();

    new StoreInst(inst, store_address, false, align, after);
    for (Use *use : far_uses)
        use->set(new LoadInst(inst->getType(), load_address, inst->getName() + ".cbs", false,
                              align, loadPoint(*use)));
}

/* Drop the lifetime markers of `alloca`, whose memory becomes a slot. */
void dropLifetimes(Value *pointer)
{
    for (User *user : make_early_inc_range(pointer->users())) {
        if (auto *intrinsic = dyn_cast<IntrinsicInst>(user)) {
            if (intrinsic->isLifetimeStartOrEnd())
                intrinsic->eraseFromParent();
        } else if (isa<BitCastInst>(user) || isa<GetElementPtrInst>(user)) {
            dropLifetimes(user);
        }
    }
}

/* Let step and its copies read and write scratch: clang found it unused. */
void clearMemoryAttributes(Function &fn, unsigned scratch_arg)
{
    for (Attribute::AttrKind kind : {Attribute::ReadNone, Attribute::ReadOnly,
                                     Attribute::WriteOnly}) {
        fn.removeParamAttr(scratch_arg, kind);
        fn.removeFnAttr(kind);
    }
#if LLVM_VERSION_MAJOR >= 16
    /* LLVM 16 folded the function's memory attributes into memory(...). */
    fn.removeFnAttr(Attribute::Memory);
#else
    fn.removeFnAttr(Attribute::ArgMemOnly);
    fn.removeFnAttr(Attribute::InaccessibleMemOnly);
    fn.removeFnAttr(Attribute::InaccessibleMemOrArgMemOnly);
#endif
    for (User *user : fn.users()) {
        if (auto *call = dyn_cast<CallBase>(user)) {
            for (Attribute::AttrKind kind : {Attribute::ReadNone, Attribute::ReadOnly,
                                             Attribute::WriteOnly}) {
                call->removeFnAttr(kind);
#if LLVM_VERSION_MAJOR >= 16
                call->removeFnAttr(Attribute::Memory);
#endif
                if (scratch_arg < call->arg_size())
                    call->removeParamAttr(scratch_arg, kind);
            }
        }
    }
}

/*
 * Make step resumable: a new entry block that switches on `resume` to the
 * start or to the point after barrier k, which returns k. Returns the
 * switch, in the new entry.
 */
SwitchInst *addResumePoints(Function &step, const std::vector<CallInst *> &barriers)
{
    LLVMContext &ctx = step.getContext();
    BasicBlock *old_entry = &step.getEntryBlock();
    BasicBlock *entry = BasicBlock::Create(ctx, "cbs.entry", &step, old_entry);
    IntegerType *i32 = Type::getInt32Ty(ctx);
    std::vector<BasicBlock *> resumes;

    /*
     * A thread that returns says 0: the header hides that 0 behind an empty
     * asm, which clang cannot fold into region's loop before the pass runs.
     */
    for (BasicBlock &bb : step) {
        if (auto *ret = dyn_cast_or_null<ReturnInst>(bb.getTerminator()))
            ret->setOperand(0, ConstantInt::get(i32, 0));
    }
    for (size_t k = 0; k < barriers.size(); k++) {
        CallInst *call = barriers[k];
        BasicBlock *before = call->getParent();
        BasicBlock *after = before->splitBasicBlock(call->getNextNode(), "cbs.resume");

        before->getTerminator()->eraseFromParent();
        call->eraseFromParent();
        ReturnInst::Create(ctx, ConstantInt::get(i32, k + 1), before);
        resumes.push_back(after);
    }
    SwitchInst *dispatch = SwitchInst::Create(step.getArg(STEP_RESUME), old_entry,
                                              (unsigned)resumes.size(), entry);
    for (size_t k = 0; k < resumes.size(); k++)
        dispatch->addCase(ConstantInt::get(i32, k + 1), resumes[k]);
    return dispatch;
}

/*
 * Recompute rather than store what only the block and arguments give,
 * wherever clang put it (its LICM hoists such addresses above a loop that
 * holds barriers, where they would cross them): moved before `dispatch`,
 * to a fixed point, since each move can make another's operands available.
 */
void hoistInvariants(Function &step, SwitchInst *dispatch)
{
    BasicBlock *entry = dispatch->getParent();
    BasicBlock *old_entry = dispatch->getDefaultDest();

    for (bool moved = true; moved;) {
        moved = false;
        for (BasicBlock &bb : step) {
            if (&bb == entry)
                continue;
            for (Instruction &inst : make_early_inc_range(bb)) {
                if (!hoistable(inst, entry, step.getArg(STEP_BLOCK)))
                    continue;
                /* No-wrap facts held where it ran, perhaps not on every path (as LICM). */
                if (&bb != old_entry)
                    inst.dropPoisonGeneratingFlags();
                inst.moveBefore(dispatch);
                moved = true;
            }
        }
    }
}

/*
 * Whether `inst`, the same in every thread, can be kept once per block: no
 * thread reads it in the region that defines it (each of its far uses
 * follows a barrier after the definition), so that every thread of a
 * region reads the value the region started with.
 */
bool keptOncePerBlock(Instruction *inst, const std::vector<Use *> &far_uses,
                      const Divergent &divergent)
{
    if (divergent.count(inst))
        return false;
    for (Use *use : far_uses) {
        if (reachesInRegion(inst, loadPoint(*use)))
            return false;
    }
    return true;
}

using Crossing = std::vector<std::pair<Instruction *, std::vector<Use *>>>;

/* What crosses a barrier (a value used where its definition no longer dominates the use). */
Crossing findCrossing(Function &step, const BasicBlock *entry, std::vector<AllocaInst *> *allocas)
{
    DominatorTree tree(step);
    Crossing crossing;

    for (BasicBlock &bb : step) {
        if (&bb == entry)
            continue;
        for (Instruction &inst : bb) {
            if (auto *alloca = dyn_cast<AllocaInst>(&inst)) {
                allocas->push_back(alloca);
                continue;
            }
            std::vector<Use *> far;
            for (Use &use : inst.uses()) {
                if (!tree.dominates(&inst, use))
                    far.push_back(&use);
            }
            if (!far.empty())
                crossing.emplace_back(&inst, std::move(far));
        }
    }
    return crossing;
}

/*
 * Keep in scratch what crosses a barrier, and every alloca. A uniform value
 * (keptOncePerBlock) has two cells at the start of scratch: threads read it
 * from the first, which stays as the region began, and write it to the
 * second, which run copies to the first after each region; both are the
 * same address for every thread, so the thread loop hoists the read and
 * branches on it outside the loop. The rest have per-thread slots after
 * them. Fills split's bytes.
 */
void moveToSlots(Function &step, SwitchInst *dispatch, const Divergent &divergent, Split &split)
{
    const DataLayout &layout = step.getParent()->getDataLayout();
    std::vector<AllocaInst *> allocas;
    Crossing crossing = findCrossing(step, dispatch->getParent(), &allocas);
    Crossing uniform, per_thread;
    std::vector<Slot> cells;

    for (auto &value : crossing) {
        bool once = keptOncePerBlock(value.first, value.second, divergent);
        (once ? uniform : per_thread).push_back(std::move(value));
    }
    for (auto &value : uniform) {
        Type *type = value.first->getType();
        cells.push_back(makeSlot(type, layout.getTypeAllocSize(type),
                                 layout.getABITypeAlign(type).value(), &split.uniform_bytes));
    }
    split.uniform_bytes = alignTo(split.uniform_bytes, 64);
    uint64_t base = 2 * split.uniform_bytes;

    IRBuilder<> b(dispatch);
    Value *threads = b.CreateZExt(step.getArg(STEP_THREADS), b.getInt64Ty());
    Value *rank = b.CreateZExt(step.getArg(STEP_RANK), b.getInt64Ty());
    Value *scratch = b.CreatePointerCast(step.getArg(STEP_SCRATCH), bytePointer(b));
    for (size_t i = 0; i < uniform.size(); i++) {
        Type *type = cells[i].type;
        demote(uniform[i].first,
               cellAddress(b, type, scratch, split.uniform_bytes + cells[i].offset),
               cellAddress(b, type, scratch, cells[i].offset), uniform[i].second, layout);
    }
    uint64_t bytes = 0;
    for (auto &value : per_thread) {
        Type *type = value.first->getType();
        Slot slot = makeSlot(type, layout.getTypeAllocSize(type),
                             layout.getABITypeAlign(type).value(), &bytes);
        Value *address = slotAddress(b, slot, scratch, threads, rank, base);
        demote(value.first, address, address, value.second, layout);
    }
    for (AllocaInst *alloca : allocas) {
        Type *type = alloca->getAllocatedType();
        uint64_t size = layout.getTypeAllocSize(type) *
                        cast<ConstantInt>(alloca->getArraySize())->getZExtValue();
        Slot slot = makeSlot(type, size, alloca->getAlign().value(), &bytes);
        Value *address = slotAddress(b, slot, scratch, threads, rank, base);

        dropLifetimes(alloca);
        alloca->replaceAllUsesWith(b.CreatePointerCast(address, alloca->getType()));
        alloca->eraseFromParent();
    }
    /* Per thread, so that threads x bytes covers the cells once (threads >= 1). */
    split.thread_bytes = bytes + base;
}

/* The blocks a thread may run from `start` to the end of its region. */
std::vector<const BasicBlock *> regionBlocks(const BasicBlock *start)
{
    SmallPtrSet<const BasicBlock *, 32> seen;
    std::vector<const BasicBlock *> todo{start}, blocks;

    while (!todo.empty()) {
        const BasicBlock *bb = todo.back();
        todo.pop_back();
        if (!seen.insert(bb).second)
            continue;
        blocks.push_back(bb);
        todo.insert(todo.end(), succ_begin(bb), succ_end(bb));
    }
    return blocks;
}

/* Whether every path from `start` ends the region the same way (one barrier, or return). */
bool oneEnd(const BasicBlock *start)
{
    const Value *end = nullptr;

    for (const BasicBlock *bb : regionBlocks(start)) {
        auto *ret = dyn_cast<ReturnInst>(bb->getTerminator());
        if (ret == nullptr)
            continue;
        const Value *said = ret->getReturnValue(); /* a constant: 0 or the barrier's k */
        if (end != nullptr && said != end)
            return false;
        end = said;
    }
    return true;
}

/*
 * Whether every thread that resumes at `start` reaches the same next
 * barrier (or returns): each branch on a divergent value that threads may
 * meet leads to one end only (the threads part and meet again before it,
 * as around `if (t < stride)` in a tree reduction).
 */
bool uniformReach(const BasicBlock *start, const Divergent &divergent)
{
    for (const BasicBlock *bb : regionBlocks(start)) {
        const Instruction *term = bb->getTerminator();
        if (term->getNumSuccessors() < 2)
            continue;
        bool analysed = isa<BranchInst>(term) || isa<SwitchInst>(term);
        if ((!analysed || divergent.count(term)) && !oneEnd(bb))
            return false;
    }
    return true;
}

/*
 * Split step at its barriers (see the top of the file), `divergent` found
 * before the split.
 */
Split splitStep(Function &step, const std::vector<CallInst *> &barriers,
                const Divergent &divergent)
{
    SwitchInst *dispatch = addResumePoints(step, barriers);
    Split split;

    split.uniform_reach.push_back(uniformReach(dispatch->getDefaultDest(), divergent));
    for (auto &resume : dispatch->cases())
        split.uniform_reach.push_back(uniformReach(resume.getCaseSuccessor(), divergent));
    hoistInvariants(step, dispatch);
    moveToSlots(step, dispatch, divergent, split);
    clearMemoryAttributes(step, STEP_SCRATCH);
    step.removeFnAttr(Attribute::NoInline);
    step.addFnAttr(Attribute::AlwaysInline);
    return split;
}

/*
 * In `clone` of region, whose threads all reach the same barrier (the
 * split's uniform_reach): return what the threads said, without keeping
 * each thread's answer or checking that they agree.
 */
void dropAgreement(Function &clone, Function &step)
{
    CallInst *call = nullptr;
    for (Instruction &inst : instructions(clone)) {
        auto *candidate = dyn_cast<CallInst>(&inst);
        if (candidate != nullptr && candidate->getCalledFunction() == &step)
            call = candidate;
    }
    if (call == nullptr)
        report_fatal_error(Twine("accel-cbs: ") + clone.getName() + " does not call " +
                           step.getName());

    IRBuilder<> b(&*clone.getEntryBlock().getFirstInsertionPt());
    AllocaInst *said = b.CreateAlloca(call->getType(), nullptr, "cbs.said");
    b.CreateStore(ConstantInt::get(call->getType(), 0), said);
    for (User *user : make_early_inc_range(call->users())) {
        auto *store = dyn_cast<StoreInst>(user);
        if (store != nullptr && store->getValueOperand() == call)
            store->eraseFromParent(); /* results[rank]: read only on a disagreement */
    }
    new StoreInst(call, said, call->getNextNode());
    for (BasicBlock &bb : clone) {
        if (auto *ret = dyn_cast<ReturnInst>(bb.getTerminator()))
            ret->setOperand(0, new LoadInst(call->getType(), said, "cbs.reached", ret));
    }
}

/* After a region: copy the uniform values it wrote to where the next reads them. */
void copyUniforms(BasicBlock *tail, Value *scratch, uint64_t uniform_bytes)
{
    IRBuilder<> b(&*tail->getFirstInsertionPt());
    Value *bytes = b.CreatePointerCast(scratch, bytePointer(b));

    b.CreateMemCpy(bytes, Align(64), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), bytes,
                                                                  uniform_bytes),
                   Align(64), uniform_bytes);
}

/*
 * Give run one clone of region per resume point (0..barriers), `resume` a
 * constant in each, and call the one run's `resume` names.
 */
void specialiseRegions(Kernel &kernel, const Split &split)
{
    size_t barriers = split.uniform_reach.size() - 1;
    CallInst *call = nullptr;
    for (User *user : kernel.region->users()) {
        auto *candidate = dyn_cast<CallInst>(user);
        if (candidate != nullptr && candidate->getFunction() == kernel.run)
            call = candidate;
    }
    if (call == nullptr)
        report_fatal_error(Twine("accel-cbs: ") + kernel.run->getName() + " does not call " +
                           kernel.region->getName());

    LLVMContext &ctx = call->getContext();
    BasicBlock *head = call->getParent();
    BasicBlock *tail = head->splitBasicBlock(call, "cbs.regions.done");
    Value *resume = call->getArgOperand(REGION_RESUME);
    std::vector<Value *> args;
    for (unsigned i = 0; i < call->arg_size(); i++) {
        if (i != REGION_RESUME)
            args.push_back(call->getArgOperand(i));
    }

    head->getTerminator()->eraseFromParent();
    IRBuilder<> b(head);
    PHINode *result = PHINode::Create(call->getType(), (unsigned)barriers + 1, "cbs.result",
                                      &tail->front());
    BasicBlock *first = nullptr;
    SwitchInst *dispatch = nullptr;
    for (size_t k = 0; k <= barriers; k++) {
        ValueToValueMapTy map;
        map[kernel.region->getArg(REGION_RESUME)] = b.getInt32((uint32_t)k);
        Function *clone = CloneFunction(kernel.region, map);
        clone->setName(kernel.region->getName() + "." + std::to_string(k));
        clone->setLinkage(GlobalValue::InternalLinkage);
        clone->removeFnAttr(Attribute::NoInline);
        if (split.uniform_reach[k])
            dropAgreement(*clone, *kernel.step);

        BasicBlock *bb = BasicBlock::Create(ctx, "cbs.region", kernel.run, tail);
        IRBuilder<> in(bb);
        CallInst *clone_call = in.CreateCall(clone, args);
        clone_call->setCallingConv(clone->getCallingConv());
        in.CreateBr(tail);
        result->addIncoming(clone_call, bb);
        if (k == 0) {
            first = bb;
            dispatch = b.CreateSwitch(resume, first, (unsigned)barriers);
        } else {
            dispatch->addCase(b.getInt32((uint32_t)k), bb);
        }
    }
    if (split.uniform_bytes > 0)
        copyUniforms(tail, args[REGION_SCRATCH - 1], split.uniform_bytes);
    call->replaceAllUsesWith(result);
    call->eraseFromParent();
}

/* Set the descriptor's run_regions and region_thread_bytes. */
void fillDescriptor(Kernel &kernel, uint64_t thread_bytes)
{
    auto *init = cast<ConstantStruct>(kernel.descriptor->getInitializer());
    StructType *type = init->getType();
    std::vector<Constant *> fields;

    if (type->getNumElements() != DESC_FIELDS)
        report_fatal_error(Twine("accel-cbs: accel_cpu_kernel_") + kernel.name +
                           " is not a CPU kernel ABI 3 descriptor");
    for (unsigned i = 0; i < type->getNumElements(); i++)
        fields.push_back(init->getOperand(i));
    fields[DESC_RUN_REGIONS] =
        ConstantExpr::getPointerCast(kernel.run, type->getElementType(DESC_RUN_REGIONS));
    fields[DESC_THREAD_BYTES] =
        ConstantInt::get(type->getElementType(DESC_THREAD_BYTES), thread_bytes);
    kernel.descriptor->setInitializer(ConstantStruct::get(type, fields));
}

/* Take the functions in `drop` off @llvm.used, so that unused ones go. */
void dropFromUsed(Module &module, const SmallPtrSetImpl<GlobalValue *> &drop)
{
    GlobalVariable *used = module.getGlobalVariable("llvm.used");
    if (used == nullptr || !used->hasInitializer())
        return;
    SmallVector<GlobalValue *, 16> keep;
    if (auto *array = dyn_cast<ConstantArray>(used->getInitializer())) {
        for (Use &op : array->operands()) {
            auto *value = dyn_cast<GlobalValue>(op->stripPointerCasts());
            if (value != nullptr && !drop.count(value))
                keep.push_back(value);
        }
    }
    used->eraseFromParent();
    if (!keep.empty())
        appendToUsed(module, keep);
}

std::vector<Kernel> findKernels(Module &module)
{
    std::vector<Kernel> kernels;

    for (Function &fn : module) {
        StringRef name = fn.getName();
        if (name.substr(0, sizeof(STEP_PREFIX) - 1) != STEP_PREFIX || fn.isDeclaration())
            continue;
        Kernel kernel;
        kernel.name = name.drop_front(sizeof(STEP_PREFIX) - 1).str();
        kernel.step = &fn;
        kernel.region = module.getFunction(REGION_PREFIX + kernel.name);
        kernel.run = module.getFunction(RUN_PREFIX + kernel.name);
        kernel.descriptor = module.getGlobalVariable(DESCRIPTOR_PREFIX + kernel.name);
        if (kernel.region == nullptr || kernel.run == nullptr || kernel.descriptor == nullptr ||
            !kernel.descriptor->hasInitializer() || fn.arg_size() < STEP_FIXED)
            report_fatal_error(Twine("accel-cbs: kernel ") + kernel.name +
                               " lacks the functions <accel/kernel.h> gives with "
                               "ACCEL__CPU_CBS");
        kernels.push_back(kernel);
    }
    return kernels;
}

/*
 * The names of the kernels split, one a line, to the file ACCEL_CBS_LIST
 * names: accel-cc takes those kernels from this image and the rest from
 * the C compiler's.
 */
void writeNames(const std::string &names)
{
    const char *path = getenv("ACCEL_CBS_LIST");
    std::error_code error;

    if (path == nullptr)
        return;
    raw_fd_ostream out(path, error);
    if (error)
        report_fatal_error(Twine("accel-cbs: cannot write ") + path + ": " + error.message());
    out << names;
}

/* ACCEL_CBS_VERBOSE's line for a kernel the pass split. */
void report(const std::string &name, size_t barriers, const Split &split)
{
    size_t uniform = 0;
    for (bool reach : split.uniform_reach)
        uniform += reach;
    errs() << "accel-cbs: " << name << ": " << barriers << " barriers, "
           << split.thread_bytes << " bytes a thread, " << split.uniform_bytes
           << " bytes a block uniform, " << uniform << " of " << split.uniform_reach.size()
           << " regions with a uniform reach (no agreement check)\n";
}

struct AccelCbsPass : PassInfoMixin<AccelCbsPass> {
    PreservedAnalyses run(Module &module, ModuleAnalysisManager &)
    {
        SmallPtrSet<GlobalValue *, 32> drop;
        bool verbose = getenv("ACCEL_CBS_VERBOSE") != nullptr;
        std::string names;

        for (Kernel &kernel : findKernels(module)) {
            std::vector<CallInst *> barriers;
            std::string refusal = stepRefusal(*kernel.step, barriers);

            drop.insert(kernel.step);
            drop.insert(kernel.region);
            drop.insert(kernel.run);
            if (!refusal.empty()) {
                if (verbose)
                    errs() << "accel-cbs: " << kernel.name << ": fibers (" << refusal << ")\n";
                continue;
            }
            Divergent divergent = accel_cbs::findDivergent(
                *kernel.step, STEP_BLOCK, SmallVector<unsigned, 4>{STEP_X, STEP_Y, STEP_Z, STEP_RANK});
            Split split = splitStep(*kernel.step, barriers, divergent);
            clearMemoryAttributes(*kernel.region, REGION_SCRATCH);
            specialiseRegions(kernel, split);
            fillDescriptor(kernel, RESULT_BYTES + split.thread_bytes);
            if (verbose)
                report(kernel.name, barriers.size(), split);
            names += kernel.name + "\n";
        }
        dropFromUsed(module, drop);
        accel_cbs::launderThreadLocals(module);
        writeNames(names);
        return PreservedAnalyses::none();
    }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
    return {LLVM_PLUGIN_API_VERSION, "accel-cbs", "1",
            [](PassBuilder &builder) {
                builder.registerPipelineParsingCallback(
                    [](StringRef name, ModulePassManager &manager,
                       ArrayRef<PassBuilder::PipelineElement>) {
                        if (name != "accel-cbs")
                            return false;
                        manager.addPass(AccelCbsPass());
                        return true;
                    });
            }};
}
