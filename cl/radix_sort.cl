/* radix_sort.cl: portable device scan and LSD radix sort of (uint key, uint value) pairs,
 * CS_RADIX_BITS bits per pass, only over the bits in use (count / scan / scatter). A work-group
 * of CS_SORT_WG items handles a block of CS_SORT_BLOCK keys (constants in layout.h). */

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

/* The number of keys: n, or with use_count the device-side count[0] capped at n (the pair
 * sort runs before the host knows the count; n is then the buffers' capacity). */
inline uint sort_count(uint n, __global const uint *count, int use_count)
{
    return use_count ? min(count[0], n) : n;
}

/* Per-block digit histogram: hist[digit * nblocks + block]. */
__kernel void radix_count(__global const uint *keys, uint cap, __global const uint *count, int use_count, uint shift,
                          __global uint *hist)
{
    __local uint cnt[CS_RADIX_BUCKETS];
    uint n = sort_count(cap, count, use_count);
    int lid = get_local_id(0);
    uint nblocks = get_num_groups(0), b = get_group_id(0);
    if (lid < CS_RADIX_BUCKETS) cnt[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < CS_SORT_IPT; k++) {
        size_t i = (size_t)b * CS_SORT_BLOCK + (size_t)k * CS_SORT_WG + lid;
        if (i < n) atomic_inc(&cnt[(keys[i] >> shift) & (CS_RADIX_BUCKETS - 1u)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < CS_RADIX_BUCKETS) hist[lid * nblocks + b] = cnt[lid];
}

#if CS_RADIX_BUCKETS != 16
#error radix_scatter packs 16 digit counts into 8 uints
#endif
/* Stable scatter by digit using the exclusively scanned histogram. Item lid owns the
 * CS_SORT_IPT consecutive keys at lid * CS_SORT_IPT of its block; the 16 per-digit counts of an
 * item are packed two per uint (16 bits each: at most CS_SORT_BLOCK = 1024 keys per block), so
 * one work-group scan of 8 uints gives every key its rank among equal digits before it. */
__kernel void radix_scatter(__global const uint *keys_in, __global const uint *vals_in, __global uint *keys_out,
                            __global uint *vals_out, uint cap, __global const uint *count, int use_count, uint shift,
                            __global const uint *hist_scanned)
{
    uint n = sort_count(cap, count, use_count);
    __local uint sc[8][CS_SORT_WG];
    __local uint base[CS_RADIX_BUCKETS];
    int lid = get_local_id(0);
    uint nblocks = get_num_groups(0), b = get_group_id(0);
    if (lid < CS_RADIX_BUCKETS) base[lid] = hist_scanned[lid * nblocks + b];
    size_t first = (size_t)b * CS_SORT_BLOCK + (size_t)lid * CS_SORT_IPT;
    uint key[CS_SORT_IPT], val[CS_SORT_IPT], dig[CS_SORT_IPT], before[CS_SORT_IPT];
    uint cnt[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < CS_SORT_IPT; k++) {
        int valid = first + k < n;
        key[k] = valid ? keys_in[first + k] : 0u;
        val[k] = valid ? vals_in[first + k] : 0u;
        uint d = (key[k] >> shift) & (CS_RADIX_BUCKETS - 1u);
        dig[k] = valid ? d : CS_RADIX_BUCKETS;
        if (valid) {
            before[k] = (cnt[d >> 1] >> ((d & 1u) * 16u)) & 0xffffu;
            cnt[d >> 1] += 1u << ((d & 1u) * 16u);
        }
    }
    /* inclusive Hillis-Steele scan of the packed counts over the work-group */
    for (int c = 0; c < 8; c++) sc[c][lid] = cnt[c];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < CS_SORT_WG; off <<= 1) {
        uint add[8];
        for (int c = 0; c < 8; c++) add[c] = lid >= off ? sc[c][lid - off] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int c = 0; c < 8; c++) sc[c][lid] += add[c];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int k = 0; k < CS_SORT_IPT; k++) {
        uint d = dig[k];
        if (d >= CS_RADIX_BUCKETS) continue;
        uint excl = ((sc[d >> 1][lid] - cnt[d >> 1]) >> ((d & 1u) * 16u)) & 0xffffu;
        uint dst = base[d] + excl + before[k];
        keys_out[dst] = key[k];
        vals_out[dst] = val[k];
    }
}
