/* scan.cl: portable device exclusive scan of uints. A work-group of CS_SORT_WG items
 * handles a block of CS_SORT_BLOCK values (constants in layout.h). */

/* inclusive Hillis-Steele scan of one value per item over CS_SORT_WG items */
inline uint wg_scan_inclusive(uint v, __local uint *buf)
{
    int lid = get_local_id(0);
    buf[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < CS_SORT_WG; off <<= 1) {
        uint add = lid >= off ? buf[lid - off] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        buf[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint r = buf[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

/* Exclusive scan, in place, of each block of CS_SORT_BLOCK values at data + off; block totals
 * to sums + sums_off. */
__kernel void scan_block(__global uint *data, uint off, uint n, __global uint *sums, uint sums_off)
{
    __local uint buf[CS_SORT_WG];
    int lid = get_local_id(0);
    size_t base = (size_t)get_group_id(0) * CS_SORT_BLOCK + (size_t)lid * CS_SORT_IPT;
    uint v[CS_SORT_IPT], sum = 0;
    for (int k = 0; k < CS_SORT_IPT; k++) {
        v[k] = base + k < n ? data[off + base + k] : 0u;
        sum += v[k];
    }
    uint incl = wg_scan_inclusive(sum, buf);
    uint run = incl - sum;
    for (int k = 0; k < CS_SORT_IPT; k++) {
        if (base + k < n) data[off + base + k] = run;
        run += v[k];
    }
    if (lid == CS_SORT_WG - 1) sums[sums_off + get_group_id(0)] = incl;
}

/* Exclusive scan, in place, of n values at data + off by one work-group (one launch for the
 * small arrays: radix histograms, block sums). It runs in rounds of SCAN_ROUND values: the
 * group loads a round into local memory with consecutive items at consecutive addresses
 * (each item reading its own contiguous run from global memory made every load of a warp
 * touch 32 cache lines: 12.5 us for lego's 4.6k histogram entries on an H100), item lid scans
 * its SCAN_IPT values there, and the round's total carries into the next. SCAN_AT pads every
 * 32 values by one so an item's run and its neighbours' fall in different banks. */
#define SCAN_IPT 8
#define SCAN_ROUND (CS_SORT_WG * SCAN_IPT)
#define SCAN_AT(j) ((j) + ((j) >> 5))
__kernel void scan_single(__global uint *data, uint off, uint n)
{
    __local uint buf[CS_SORT_WG];
    __local uint vals[SCAN_AT(SCAN_ROUND)];
    __local uint round_total;
    uint lid = get_local_id(0), carry = 0;
    for (uint base = 0; base < n; base += SCAN_ROUND) {
        for (uint k = 0; k < SCAN_IPT; k++) {
            uint j = k * CS_SORT_WG + lid;
            vals[SCAN_AT(j)] = base + j < n ? data[off + base + j] : 0u;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        uint v[SCAN_IPT], sum = 0;
        for (uint k = 0; k < SCAN_IPT; k++) {
            v[k] = vals[SCAN_AT(lid * SCAN_IPT + k)];
            sum += v[k];
        }
        uint incl = wg_scan_inclusive(sum, buf), run = carry + incl - sum;
        for (uint k = 0; k < SCAN_IPT; k++) {
            vals[SCAN_AT(lid * SCAN_IPT + k)] = run;
            run += v[k];
        }
        if (lid == CS_SORT_WG - 1) round_total = incl;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < SCAN_IPT; k++) {
            uint j = k * CS_SORT_WG + lid;
            if (base + j < n) data[off + base + j] = vals[SCAN_AT(j)];
        }
        carry += round_total;
        barrier(CLK_LOCAL_MEM_FENCE); /* the next round's loads overwrite vals and round_total */
    }
}

__kernel void scan_add(__global uint *data, uint off, uint n, __global const uint *sums, uint sums_off)
{
    size_t i = get_global_id(0);
    if (i >= n) return;
    data[off + i] += sums[sums_off + i / CS_SORT_BLOCK];
}
