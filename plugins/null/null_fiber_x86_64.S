/*
 * The fiber context switch for x86-64 (System V): saves what a callee must
 * preserve (rbx, rbp, r12-r15, the stack pointer, and the MXCSR and x87
 * control words) and nothing else, since the switch is an ordinary call.
 * See null_fiber.h.
 */
    .text

/* void accel__null_ctx_swap(void **save_sp, void *to_sp) */
    .globl accel__null_ctx_swap
    .hidden accel__null_ctx_swap
    .type accel__null_ctx_swap, @function
    .p2align 4
accel__null_ctx_swap:
    .cfi_startproc
    pushq %rbp
    .cfi_adjust_cfa_offset 8
    pushq %rbx
    .cfi_adjust_cfa_offset 8
    pushq %r12
    .cfi_adjust_cfa_offset 8
    pushq %r13
    .cfi_adjust_cfa_offset 8
    pushq %r14
    .cfi_adjust_cfa_offset 8
    pushq %r15
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .cfi_endproc
    .size accel__null_ctx_swap, .-accel__null_ctx_swap

/*
 * Where a new fiber's first switch returns to: entry(arg), with entry in
 * r12 and arg in r13 (see accel__null_ctx_make). The entry never returns.
 */
    .globl accel__null_ctx_start
    .hidden accel__null_ctx_start
    .type accel__null_ctx_start, @function
    .p2align 4
accel__null_ctx_start:
    .cfi_startproc
    .cfi_undefined rip
    movq %r13, %rdi
    callq *%r12
    ud2
    .cfi_endproc
    .size accel__null_ctx_start, .-accel__null_ctx_start

    .section .note.GNU-stack,"",@progbits
