/* 16-bit floats: IEEE half (f16) and bfloat16, to and from float, round
 * to nearest even. Private to libcollective. */
#ifndef COLL_HALFPREC_H
#define COLL_HALFPREC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

float coll_f16_to_f32(uint16_t h);
uint16_t coll_f32_to_f16(float f);
float coll_bf16_to_f32(uint16_t b);
uint16_t coll_f32_to_bf16(float f);

#ifdef __cplusplus
}
#endif

#endif
