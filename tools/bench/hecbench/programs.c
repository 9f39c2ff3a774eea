/* The programs of the real-code suite (hecbench.h), in the order measured. */
#include "../hecbench.h"

extern const struct hb_program hb_jacobi;
extern const struct hb_program hb_iso2dfd;
extern const struct hb_program hb_bilateral;
extern const struct hb_program hb_laplace3d;
extern const struct hb_program hb_rtm8;
extern const struct hb_program hb_convolution3D;
extern const struct hb_program hb_scan;
extern const struct hb_program hb_stddev;
extern const struct hb_program hb_phmm;
extern const struct hb_program hb_softmax;
extern const struct hb_program hb_simpleSpmv;
extern const struct hb_program hb_page_rank;
extern const struct hb_program hb_gd;
extern const struct hb_program hb_adam;

/*
 * The stencils and convolutions, then the kernels with barriers and shared
 * memory, then the gathers and the rest.
 */
const struct hb_program *const hb_programs[] = {
    &hb_jacobi,        &hb_iso2dfd,   &hb_bilateral, &hb_laplace3d, &hb_rtm8,
    &hb_convolution3D, &hb_scan,      &hb_stddev,    &hb_phmm,      &hb_softmax,
    &hb_simpleSpmv,    &hb_page_rank, &hb_gd,        &hb_adam,      NULL,
};
