/*
 * The fiber context switch for AArch64 (AAPCS64): saves what a callee must
 * preserve (x19-x30, d8-d15, sp, and FPCR) and nothing else, since the
 * switch is an ordinary call. See null_fiber.h.
 */
    .text

/* void accel__null_ctx_swap(void **save_sp, void *to_sp) */
    .globl accel__null_ctx_swap
    .hidden accel__null_ctx_swap
    .type accel__null_ctx_swap, %function
    .p2align 4
accel__null_ctx_swap:
    .cfi_startproc
    sub sp, sp, #176
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mrs x9, fpcr
    str x9, [sp, #160]
    mov x9, sp
    str x9, [x0]
    mov sp, x1
    ldr x9, [sp, #160]
    msr fpcr, x9
    ldp d14, d15, [sp, #144]
    ldp d12, d13, [sp, #128]
    ldp d10, d11, [sp, #112]
    ldp d8, d9, [sp, #96]
    ldp x29, x30, [sp, #80]
    ldp x27, x28, [sp, #64]
    ldp x25, x26, [sp, #48]
    ldp x23, x24, [sp, #32]
    ldp x21, x22, [sp, #16]
    ldp x19, x20, [sp, #0]
    add sp, sp, #176
    ret
    .cfi_endproc
    .size accel__null_ctx_swap, .-accel__null_ctx_swap

/*
 * Where a new fiber's first switch returns to: entry(arg), with entry in
 * x19 and arg in x20 (see accel__null_ctx_make). The entry never returns.
 */
    .globl accel__null_ctx_start
    .hidden accel__null_ctx_start
    .type accel__null_ctx_start, %function
    .p2align 4
accel__null_ctx_start:
    .cfi_startproc
    .cfi_undefined x30
    mov x29, #0
    mov x0, x20
    blr x19
    brk #0
    .cfi_endproc
    .size accel__null_ctx_start, .-accel__null_ctx_start

    .section .note.GNU-stack,"",%progbits
