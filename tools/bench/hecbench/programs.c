/* The programs of the real-code suite (hecbench.h), in the order measured. */
#include "../hecbench.h"

extern const struct hb_program hb_jacobi;
extern const struct hb_program hb_scan;
extern const struct hb_program hb_stddev;
extern const struct hb_program hb_phmm;
extern const struct hb_program hb_softmax;

const struct hb_program *const hb_programs[] = {
    &hb_jacobi,
    &hb_scan,
    &hb_stddev,
    &hb_phmm,
    &hb_softmax,
    NULL,
};
