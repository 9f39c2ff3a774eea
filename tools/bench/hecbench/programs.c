/* The programs of the real-code suite (hecbench.h), in the order measured. */
#include "../hecbench.h"

extern const struct hb_program hb_jacobi;
extern const struct hb_program hb_iso2dfd;
extern const struct hb_program hb_laplace3d;
extern const struct hb_program hb_convolution3D;
extern const struct hb_program hb_rtm8;
extern const struct hb_program hb_bilateral;

const struct hb_program *const hb_programs[] = {
    &hb_jacobi, &hb_iso2dfd,   &hb_laplace3d, &hb_convolution3D,
    &hb_rtm8,   &hb_bilateral, NULL,
};
