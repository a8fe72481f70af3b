/*
 * Windows for the TLB model (tools/tlb, `./qemu-run.sh --tlb`): `hint
 * #114`, which every Arm CPU runs as a NOP (so a program that marks runs
 * unchanged on Linux and without the model), with an operation in x0 and
 * a label in x1. Header-only, like proc.h.
 */
#ifndef FAULTLINE_TLB_MARK_H
#define FAULTLINE_TLB_MARK_H

/* Empty this CPU's modelled TLBs. */
#define TLB_FLUSH 1
/* Start counting, on every CPU. */
#define TLB_BEGIN 2
/* Report every CPU's counts since TLB_BEGIN, labelled LABEL. */
#define TLB_REPORT 3

static inline void tlb_mark(unsigned long op, unsigned long label)
{
	register unsigned long x0 asm("x0") = op;
	register unsigned long x1 asm("x1") = label;
	/* "memory": the window's loads and stores stay inside it. */
	asm volatile("hint #114" : : "r"(x0), "r"(x1) : "memory");
}

#endif
