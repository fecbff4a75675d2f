/* Private: big arrays read at random (the per-server engines' server records and event
 * list at n = 10^6 and beyond). */
#ifndef LBMC_BIGMEM_H
#define LBMC_BIGMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

/** Ask the kernel for transparent huge pages (2 MiB) over the whole 2 MiB pages inside
 *  [p, p + bytes), before they are first touched: a random access into an array of tens
 *  of MiB then rarely misses the TLB (with 4 KiB pages nearly every access does, and a
 *  page walk, twice as long under virtualisation, costs about as much as the cache
 *  miss). A hint (madvise MADV_HUGEPAGE, Linux with transparent huge pages in "madvise"
 *  or "always" mode): it changes no result, and is ignored where unsupported. */
static inline void lbmc_advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
  const uintptr_t H = (uintptr_t)2 << 20;
  const uintptr_t a = ((uintptr_t)p + H - 1) & ~(H - 1), e = ((uintptr_t)p + bytes) & ~(H - 1);
  if (p && e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

#endif
