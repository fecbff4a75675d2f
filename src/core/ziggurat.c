/* The tables of the exponential ziggurat and its slow path (ziggurat.h; Marsaglia &
 * Tsang 2000): the fast path is inline in the header, the rare draws outside the
 * inner rectangles land here. */
#include "ziggurat.h"

#include <math.h>

/* Right edge of the base layer and the common area of the 256 layers, for the
 * exponential density exp(-x) (Marsaglia & Tsang 2000, zigset). */
#define LBMC_ZIG_R 7.697117470131487
#define LBMC_ZIG_V 3.949659822581572e-3

void lbmc_zig_exp_init(lbmc_zig_exp *z)
{
  const double m = 0x1p45;
  double de = LBMC_ZIG_R, te = de, q = LBMC_ZIG_V / exp(-de);
  z->k[0] = (uint64_t)((de / q) * m);
  z->k[1] = 0;
  z->w[0] = q / m;
  z->w[255] = de / m;
  z->f[0] = 1.0;
  z->f[255] = exp(-de);
  for (int i = 254; i >= 1; i--) {
    de = -log(LBMC_ZIG_V / de + exp(-de));
    z->k[i + 1] = (uint64_t)((de / te) * m);
    te = de;
    z->f[i] = exp(-de);
    z->w[i] = de / m;
  }
}

double lbmc_zig_exp_slow(lbmc_stream *s, const lbmc_zig_exp *z, uint32_t iz, uint64_t jz)
{
  double x;
  if (iz == 0) return LBMC_ZIG_R - log(1.0 - lbmc_u01(s)); /* tail: R + Exp(1) */
  x = (double)jz * z->w[iz];
  if (z->f[iz] + lbmc_u01(s) * (z->f[iz - 1] - z->f[iz]) < exp(-x)) return x;
  return -1.0;
}
