/* The programs of the real-code suite (hecbench.h), in the order measured. */
#include "../hecbench.h"

extern const struct hb_program hb_jacobi;
extern const struct hb_program hb_adam;
extern const struct hb_program hb_page_rank;
extern const struct hb_program hb_simpleSpmv;
extern const struct hb_program hb_gd;

const struct hb_program *const hb_programs[] = {
    &hb_jacobi, &hb_adam, &hb_page_rank, &hb_simpleSpmv, &hb_gd, NULL,
};
